import { randomUUID } from 'node:crypto';
import type { Redis } from 'ioredis';

/** Gives back an upload slot (once; later calls do nothing). */
export type ReleaseSlot = () => void;

/**
 * How many uploads each participant has running at once, across every gateway that shares it:
 * `take` reserves one of a participant's `limit` slots, or answers null when all are taken.
 */
export interface UploadSlots {
  take(userId: string, limit: number): Promise<ReleaseSlot | null>;
}

/** The slots of one gateway process (the all-in-one mode, or a single gateway). */
export class MemoryUploadSlots implements UploadSlots {
  private readonly running = new Map<string, number>();

  async take(userId: string, limit: number): Promise<ReleaseSlot | null> {
    const count = this.running.get(userId) ?? 0;
    if (count >= limit) return null;
    this.running.set(userId, count + 1);
    let released = false;
    return () => {
      if (released) return;
      released = true;
      const left = (this.running.get(userId) ?? 1) - 1;
      if (left > 0) this.running.set(userId, left);
      else this.running.delete(userId);
    };
  }
}

/**
 * Takes a slot if one is free, in one step on the server: slots whose time is up are dropped
 * first (a gateway that stopped mid-upload never gave its back), then the slot is added if fewer
 * than the limit remain. Redis's own clock, so gateways' clocks need not agree.
 * KEYS[1] the participant's set; ARGV: limit, slot id, how long a slot lasts (ms).
 */
const TAKE_SLOT = `
local time = redis.call('TIME')
local now = tonumber(time[1]) * 1000 + math.floor(tonumber(time[2]) / 1000)
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now)
if redis.call('ZCARD', KEYS[1]) >= tonumber(ARGV[1]) then return 0 end
redis.call('ZADD', KEYS[1], now + tonumber(ARGV[3]), ARGV[2])
redis.call('PEXPIRE', KEYS[1], tonumber(ARGV[3]))
return 1
`;

/**
 * The slots in Redis, shared by every gateway replica: one sorted set per participant, one member
 * per running upload, scored with when it lapses. A slot lasts `slotMs` at most (longer than any
 * upload can run: the evidence service ends a request after 15 minutes), so a gateway that dies
 * mid-upload holds its slots only that long.
 */
export class RedisUploadSlots implements UploadSlots {
  constructor(
    private readonly redis: Redis,
    private readonly prefix = 'portal:gateway-uploads:',
    private readonly slotMs = 16 * 60_000,
  ) {}

  async take(userId: string, limit: number): Promise<ReleaseSlot | null> {
    const key = `${this.prefix}${userId}`;
    const slot = randomUUID();
    const taken = await this.redis.eval(TAKE_SLOT, 1, key, String(limit), slot, String(this.slotMs));
    if (Number(taken) !== 1) return null;
    let released = false;
    return () => {
      if (released) return;
      released = true;
      // A slot not given back (Redis away for a moment) lapses by itself.
      this.redis.zrem(key, slot).catch(() => undefined);
    };
  }
}
