import type { Redis } from 'ioredis';
import type { SessionRecord, SessionStore } from '../user-repository.js';

/**
 * Sessions in Redis: one key per session (expiring with the session) and one set per user of
 * their session ids, so that every session of a user can be ended at once.
 */
export class RedisSessionStore implements SessionStore {
  constructor(
    private readonly redis: Redis,
    private readonly prefix = 'portal:identity',
  ) {}

  private key(id: string): string {
    return `${this.prefix}:session:${id}`;
  }

  private userKey(userId: string): string {
    return `${this.prefix}:user-sessions:${userId}`;
  }

  async create(session: SessionRecord): Promise<void> {
    await this.redis
      .multi()
      .set(this.key(session.id), JSON.stringify(session), 'PXAT', session.expiresAt)
      .sadd(this.userKey(session.userId), session.id)
      .exec();
  }

  async find(id: string): Promise<SessionRecord | null> {
    const raw = await this.redis.get(this.key(id));
    if (!raw) return null;
    const session = JSON.parse(raw) as SessionRecord;
    return session.expiresAt > Date.now() ? session : null;
  }

  async extend(id: string, expiresAt: number): Promise<void> {
    const session = await this.find(id);
    if (!session) return;
    await this.redis.set(this.key(id), JSON.stringify({ ...session, expiresAt }), 'PXAT', expiresAt);
  }

  async delete(id: string): Promise<boolean> {
    const session = await this.find(id);
    const removed = await this.redis.del(this.key(id));
    if (session) await this.redis.srem(this.userKey(session.userId), id);
    return removed > 0;
  }

  async deleteForUser(userId: string): Promise<string[]> {
    const ids = await this.redis.smembers(this.userKey(userId));
    const pipeline = this.redis.multi();
    for (const id of ids) pipeline.del(this.key(id));
    pipeline.del(this.userKey(userId));
    const results = await pipeline.exec();
    // Only sessions that still existed were ended now.
    return ids.filter((_id, index) => Number(results?.[index]?.[1] ?? 0) > 0);
  }

  async ping(): Promise<void> {
    await this.redis.ping();
  }
}
