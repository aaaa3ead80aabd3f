import type { Logger } from 'pino';
import { MemoryAdmissionLedger, type AdmissionLedger } from '../repositories/upload-admissions.js';
import type { UploadStorage } from '../repositories/upload-storage.js';

/** How long an admitted upload is counted as pending at most (its creation takes far less: a creation that failed stops counting then). */
const PENDING_MS = 60_000;

/**
 * One participant's share of unfinished resumable uploads (UPLOAD_UNFINISHED_BYTES_PER_PARTICIPANT):
 * what their stored uploads declare, plus the uploads admitted but not stored yet. The check and
 * the admission it allows are one step per participant: creations of one participant's uploads
 * are checked one after the other, so that a burst of creations at the same instant cannot all
 * read the same stored total and pass together (they did: twelve 1 MiB uploads against a 3 MiB
 * share made seven). The ledger holds those steps and the pending admissions: in this process
 * (MemoryAdmissionLedger), or in Redis for every evidence replica (RedisAdmissionLedger; before,
 * creations spread over N replicas at the same instant could reserve N shares).
 */
export class UnfinishedUploadQuota {
  constructor(
    private readonly storage: Pick<UploadStorage, 'reservations'>,
    private readonly quota: number,
    private readonly unknownAs: number,
    private readonly ledger: AdmissionLedger = new MemoryAdmissionLedger(),
    private readonly now: () => number = Date.now,
    private readonly logger?: Logger,
  ) {}

  /**
   * Admits the upload `uploadId` of `size` bytes (undefined: not known yet, counted as the
   * largest) for `ownerId`, or answers how much their unfinished uploads already hold. Rejects
   * with AdmissionTurnUnavailable when the shared ledger cannot give the participant's turn.
   */
  admit(ownerId: string, uploadId: string, size: number | undefined): Promise<{ admitted: true } | { admitted: false; reserved: number }> {
    return this.ledger.exclusive(ownerId, () => this.check(ownerId, uploadId, size ?? this.unknownAs));
  }

  /**
   * The upload was asked about after its creation (a chunk, a HEAD, a cancellation): its creation
   * is over, so it is counted by what the store holds (nothing, once cancelled or finished), no
   * longer as admitted. Upload ids start with their owner's id (uploadIdFor).
   */
  created(uploadId: string): Promise<void> {
    const ownerId = uploadId.slice(0, uploadId.indexOf('.'));
    return this.ledger.remove(ownerId, [uploadId]).catch((error: unknown) => {
      // It lapses by itself (PENDING_MS): counted a little longer, never lost.
      this.logger?.warn({ err: error, uploadId }, 'pending upload admission not removed');
    });
  }

  private async check(
    ownerId: string,
    uploadId: string,
    size: number,
  ): Promise<{ admitted: true } | { admitted: false; reserved: number }> {
    const stored = await this.storage.reservations(ownerId, this.unknownAs);
    const pending = await this.ledger.pending(ownerId);
    let reserved = 0;
    for (const bytes of stored.values()) reserved += bytes;
    const now = this.now();
    const over: string[] = [];
    for (const [id, admitted] of pending) {
      // Stored by now (counted above), or a creation that never got that far.
      if (stored.has(id) || now - admitted.at > PENDING_MS) over.push(id);
      else reserved += admitted.size;
    }
    await this.ledger.remove(ownerId, over);
    if (reserved + size > this.quota) return { admitted: false, reserved };
    await this.ledger.add(ownerId, uploadId, { size, at: now });
    return { admitted: true };
  }
}
