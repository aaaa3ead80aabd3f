import { randomUUID } from 'node:crypto';
import { setTimeout as delay } from 'node:timers/promises';
import type { Redis } from 'ioredis';

/** An upload the unfinished-bytes quota admitted, which the store may not list yet. */
export interface PendingAdmission {
  size: number;
  /** When it was admitted (ms since the epoch). */
  at: number;
}

/** The ledger could not give a participant's turn in time (its store did not answer, or a turn never ended). */
export class AdmissionTurnUnavailable extends Error {
  constructor(ownerId: string, cause?: unknown) {
    super(`no admission turn for ${ownerId}`, cause === undefined ? undefined : { cause });
  }
}

/**
 * Where the unfinished-bytes quota keeps one participant's check-and-admit step and the uploads it
 * admitted that are not stored yet, shared by every evidence process that uses the same ledger:
 * `exclusive` runs one participant's step while no other step of theirs runs in any of them.
 */
export interface AdmissionLedger {
  exclusive<T>(ownerId: string, step: () => Promise<T>): Promise<T>;
  pending(ownerId: string): Promise<Map<string, PendingAdmission>>;
  add(ownerId: string, uploadId: string, admission: PendingAdmission): Promise<void>;
  remove(ownerId: string, uploadIds: string[]): Promise<void>;
}

/** Runs each participant's steps one after the other within this process. */
class OwnerQueues {
  private readonly queues = new Map<string, Promise<unknown>>();

  run<T>(ownerId: string, step: () => Promise<T>): Promise<T> {
    const previous = this.queues.get(ownerId) ?? Promise.resolve();
    const turn = previous.then(step, step);
    this.queues.set(ownerId, turn);
    void turn
      .finally(() => {
        if (this.queues.get(ownerId) === turn) this.queues.delete(ownerId);
      })
      .catch(() => undefined);
    return turn;
  }
}

/** The ledger of one evidence process (the all-in-one mode, or a single evidence process). */
export class MemoryAdmissionLedger implements AdmissionLedger {
  private readonly queues = new OwnerQueues();
  private readonly admitted = new Map<string, Map<string, PendingAdmission>>();

  exclusive<T>(ownerId: string, step: () => Promise<T>): Promise<T> {
    return this.queues.run(ownerId, step);
  }

  async pending(ownerId: string): Promise<Map<string, PendingAdmission>> {
    return new Map(this.admitted.get(ownerId));
  }

  async add(ownerId: string, uploadId: string, admission: PendingAdmission): Promise<void> {
    const mine = this.admitted.get(ownerId) ?? new Map<string, PendingAdmission>();
    mine.set(uploadId, admission);
    this.admitted.set(ownerId, mine);
  }

  async remove(ownerId: string, uploadIds: string[]): Promise<void> {
    const mine = this.admitted.get(ownerId);
    if (!mine) return;
    for (const id of uploadIds) mine.delete(id);
    if (mine.size === 0) this.admitted.delete(ownerId);
  }
}

/** Ends a turn only if it is still the holder's (a turn that outlived its lease may be another's now). */
const END_TURN = `
if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end
return 0
`;

export interface RedisAdmissionLedgerOptions {
  prefix?: string;
  /** How long a turn may be held at most (a process that died mid-step holds it that long). */
  leaseMs?: number;
  /** How long a step waits for its turn before it gives up (AdmissionTurnUnavailable). */
  waitMs?: number;
  /** How long the pending admissions of a participant are kept after the last one was added. */
  keepMs?: number;
}

/**
 * The ledger in Redis, shared by every evidence replica. A participant's turn is a key set only if
 * absent (`SET NX PX`), ended by a compare-and-delete, and lapses after `leaseMs` if its process
 * died; steps of one process queue locally first, so a burst asks Redis for one turn at a time.
 * The pending admissions are a hash per participant (upload id -> "size:at").
 */
export class RedisAdmissionLedger implements AdmissionLedger {
  private readonly queues = new OwnerQueues();
  private readonly prefix: string;
  private readonly leaseMs: number;
  private readonly waitMs: number;
  private readonly keepMs: number;

  constructor(
    private readonly redis: Redis,
    options: RedisAdmissionLedgerOptions = {},
  ) {
    this.prefix = options.prefix ?? 'portal:evidence-admissions:';
    this.leaseMs = options.leaseMs ?? 15_000;
    this.waitMs = options.waitMs ?? 10_000;
    this.keepMs = options.keepMs ?? 120_000;
  }

  exclusive<T>(ownerId: string, step: () => Promise<T>): Promise<T> {
    return this.queues.run(ownerId, async () => {
      const key = `${this.prefix}turn:${ownerId}`;
      const token = randomUUID();
      const deadline = Date.now() + this.waitMs;
      for (let wait = 5; ; wait = Math.min(wait * 2, 100)) {
        let taken: string | null;
        try {
          taken = await this.redis.set(key, token, 'PX', this.leaseMs, 'NX');
        } catch (error) {
          throw new AdmissionTurnUnavailable(ownerId, error);
        }
        if (taken === 'OK') break;
        if (Date.now() + wait > deadline) throw new AdmissionTurnUnavailable(ownerId);
        await delay(wait);
      }
      try {
        return await step();
      } finally {
        await this.redis.eval(END_TURN, 1, key, token).catch(() => undefined);
      }
    });
  }

  async pending(ownerId: string): Promise<Map<string, PendingAdmission>> {
    const stored = await this.redis.hgetall(this.pendingKey(ownerId));
    const admitted = new Map<string, PendingAdmission>();
    for (const [uploadId, value] of Object.entries(stored)) {
      const [size, at] = value.split(':').map(Number);
      if (Number.isFinite(size) && Number.isFinite(at)) admitted.set(uploadId, { size: size!, at: at! });
    }
    return admitted;
  }

  async add(ownerId: string, uploadId: string, admission: PendingAdmission): Promise<void> {
    const key = this.pendingKey(ownerId);
    await this.redis.multi().hset(key, uploadId, `${admission.size}:${admission.at}`).pexpire(key, this.keepMs).exec();
  }

  async remove(ownerId: string, uploadIds: string[]): Promise<void> {
    if (uploadIds.length > 0) await this.redis.hdel(this.pendingKey(ownerId), ...uploadIds);
  }

  private pendingKey(ownerId: string): string {
    return `${this.prefix}pending:${ownerId}`;
  }
}
