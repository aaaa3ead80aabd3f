import type { UploadStorage } from './upload-storage.js';

/** An upload admitted by the quota whose info may not be stored yet. */
interface Admitted {
  size: number;
  at: number;
}

/** How long an admitted upload is counted as pending at most (its creation takes far less: a creation that failed stops counting then). */
const PENDING_MS = 60_000;

/**
 * One participant's share of unfinished resumable uploads (UPLOAD_UNFINISHED_BYTES_PER_PARTICIPANT):
 * what their stored uploads declare, plus the uploads admitted but not stored yet. The check and
 * the admission it allows are one step per participant: creations of one participant's uploads
 * are checked one after the other, so that a burst of creations at the same instant cannot all
 * read the same stored total and pass together (they did: twelve 1 MiB uploads against a 3 MiB
 * share made seven). Within one evidence process; replicas each admit on what is stored.
 */
export class UnfinishedUploadQuota {
  /** The last check queued for each participant: the next one waits for it. */
  private readonly queues = new Map<string, Promise<unknown>>();
  private readonly pending = new Map<string, Map<string, Admitted>>();

  constructor(
    private readonly storage: Pick<UploadStorage, 'reservations'>,
    private readonly quota: number,
    private readonly unknownAs: number,
    private readonly now: () => number = Date.now,
  ) {}

  /**
   * Admits the upload `uploadId` of `size` bytes (undefined: not known yet, counted as the
   * largest) for `ownerId`, or answers how much their unfinished uploads already hold.
   */
  admit(ownerId: string, uploadId: string, size: number | undefined): Promise<{ admitted: true } | { admitted: false; reserved: number }> {
    const previous = this.queues.get(ownerId) ?? Promise.resolve();
    const turn = previous.then(
      () => this.check(ownerId, uploadId, size ?? this.unknownAs),
      () => this.check(ownerId, uploadId, size ?? this.unknownAs),
    );
    this.queues.set(ownerId, turn);
    void turn.finally(() => {
      if (this.queues.get(ownerId) === turn) this.queues.delete(ownerId);
    }).catch(() => undefined);
    return turn;
  }

  /**
   * The upload was asked about after its creation (a chunk, a HEAD, a cancellation): its creation
   * is over, so it is counted by what the store holds (nothing, once cancelled or finished), no
   * longer as admitted. Upload ids start with their owner's id (uploadIdFor).
   */
  created(uploadId: string): void {
    const ownerId = uploadId.slice(0, uploadId.indexOf('.'));
    const mine = this.pending.get(ownerId);
    if (mine?.delete(uploadId)) this.keep(ownerId, mine);
  }

  private async check(ownerId: string, uploadId: string, size: number): Promise<{ admitted: true } | { admitted: false; reserved: number }> {
    const stored = await this.storage.reservations(ownerId, this.unknownAs);
    const mine = this.pending.get(ownerId) ?? new Map<string, Admitted>();
    let reserved = 0;
    for (const bytes of stored.values()) reserved += bytes;
    const now = this.now();
    for (const [id, admitted] of mine) {
      // Stored by now (counted above), or a creation that never got that far.
      if (stored.has(id) || now - admitted.at > PENDING_MS) mine.delete(id);
      else reserved += admitted.size;
    }
    if (reserved + size > this.quota) {
      this.keep(ownerId, mine);
      return { admitted: false, reserved };
    }
    mine.set(uploadId, { size, at: now });
    this.keep(ownerId, mine);
    return { admitted: true };
  }

  private keep(ownerId: string, mine: Map<string, Admitted>): void {
    if (mine.size > 0) this.pending.set(ownerId, mine);
    else this.pending.delete(ownerId);
  }
}
