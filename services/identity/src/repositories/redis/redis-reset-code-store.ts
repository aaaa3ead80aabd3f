import type { Redis } from 'ioredis';
import type { ResetCodeRecord, ResetCodeStore } from '../user-repository.js';

/** Reset codes in Redis: one hash per user, expiring with the code. */
export class RedisResetCodeStore implements ResetCodeStore {
  constructor(
    private readonly redis: Redis,
    private readonly prefix = 'portal:identity',
  ) {}

  private key(userId: string): string {
    return `${this.prefix}:reset-code:${userId}`;
  }

  async put(record: ResetCodeRecord): Promise<void> {
    const key = this.key(record.userId);
    await this.redis
      .multi()
      .del(key)
      .hset(key, { codeHash: record.codeHash, expiresAt: String(record.expiresAt), attemptsLeft: String(record.attemptsLeft) })
      .pexpireat(key, record.expiresAt + 60_000)
      .exec();
  }

  async get(userId: string): Promise<ResetCodeRecord | null> {
    const fields = await this.redis.hgetall(this.key(userId));
    if (!fields.codeHash) return null;
    return { userId, codeHash: fields.codeHash, expiresAt: Number(fields.expiresAt), attemptsLeft: Number(fields.attemptsLeft) };
  }

  async spendAttempt(userId: string): Promise<number> {
    // One atomic step: a code that expired meanwhile is not brought back to life by the decrement.
    const left = await this.redis.eval(
      "if redis.call('exists', KEYS[1]) == 1 then return redis.call('hincrby', KEYS[1], 'attemptsLeft', -1) else return 0 end",
      1,
      this.key(userId),
    );
    return Number(left);
  }

  async delete(userId: string): Promise<void> {
    await this.redis.del(this.key(userId));
  }
}
