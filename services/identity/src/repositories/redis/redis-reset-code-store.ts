import type { Redis } from 'ioredis';
import type { ResetCodeRecord, ResetCodeStore } from '../user-repository.js';

/** Takes an attempt from a live code with attempts left; answers [codeHash, expiresAt, attemptsLeft] or nil. */
const TAKE_ATTEMPT = `
local fields = redis.call('hmget', KEYS[1], 'codeHash', 'expiresAt', 'attemptsLeft')
if not fields[1] or tonumber(fields[3]) <= 0 or tonumber(fields[2]) <= tonumber(ARGV[1]) then return nil end
local left = redis.call('hincrby', KEYS[1], 'attemptsLeft', -1)
return { fields[1], fields[2], left }
`;

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

  async takeAttempt(userId: string, now: number): Promise<ResetCodeRecord | null> {
    // One Lua script runs as one step on the server: no other guess comes between check and decrement.
    const taken = (await this.redis.eval(TAKE_ATTEMPT, 1, this.key(userId), String(now))) as [string, string, number] | null;
    if (!taken) return null;
    return { userId, codeHash: taken[0], expiresAt: Number(taken[1]), attemptsLeft: Number(taken[2]) };
  }

  async returnAttempt(userId: string): Promise<void> {
    // A code that was replaced or deleted meanwhile is not brought back to life.
    await this.redis.eval(
      "if redis.call('exists', KEYS[1]) == 1 then redis.call('hincrby', KEYS[1], 'attemptsLeft', 1) end return 0",
      1,
      this.key(userId),
    );
  }

  async delete(userId: string): Promise<void> {
    await this.redis.del(this.key(userId));
  }
}
