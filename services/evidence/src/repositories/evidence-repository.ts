import type { EventEnvelope, MediaType } from '@portal/contracts';
import type { BlobIntents, OutboxStore } from '@portal/platform';
import type { EvidenceChanges, EvidenceRecord } from '../domain/evidence-record.js';

export interface PendingEvent {
  topic: string;
  event: EventEnvelope;
}

export interface EvidenceFilter {
  /** Only this participant's items. */
  ownerId?: string;
  /** Only public items whose media can be shown (ready, or notes). */
  publicOnly?: boolean;
  type?: MediaType;
}

export interface EvidencePage {
  items: EvidenceRecord[];
  nextCursor: string | null;
}

export interface FinishedUpload {
  uploadId: string;
  evidenceId: string;
  size: number;
}

/**
 * The evidence repository port. Writes take the events that announce them and store them with the
 * change (transactional outbox). Lists are newest first, a page at a time (keyset cursors).
 */
export interface EvidenceRepository {
  /**
   * Stores a new item. With an idempotency key (the client's name for this piece of evidence),
   * the key is kept with the item: a second item of the same owner with the same key is refused
   * (the store's unique index rejects it), findByIdempotencyKey finds the first.
   */
  create(record: EvidenceRecord, events: PendingEvent[], finishedUpload?: FinishedUpload, idempotencyKey?: string): Promise<void>;
  /** The owner's live item made with this idempotency key, if any. */
  findByIdempotencyKey(userId: string, key: string): Promise<EvidenceRecord | null>;
  findById(id: string): Promise<EvidenceRecord | null>;
  /** Applies the changes; null when the item does not exist. */
  update(id: string, changes: EvidenceChanges, events: PendingEvent[]): Promise<EvidenceRecord | null>;
  delete(id: string, events: PendingEvent[]): Promise<EvidenceRecord | null>;
  list(filter: EvidenceFilter, limit: number, cursor?: string): Promise<EvidencePage>;
  /** Sets every item's visibility; answers how many changed. */
  setAllVisibility(isPublic: boolean, events: (changed: number) => PendingEvent[]): Promise<number>;
  /** Applies a media result only if the item is still at that revision; answers the updated item. */
  applyMediaResult(id: string, revision: number, changes: EvidenceChanges): Promise<EvidenceRecord | null>;
  updateAuthor(userId: string, username: string, avatarUrl: string | null): Promise<number>;
  /** Deletes every item of a participant; answers what was deleted (for the blobs). */
  deleteByOwner(userId: string, events: (records: EvidenceRecord[]) => PendingEvent[]): Promise<EvidenceRecord[]>;
  /** Items still waiting for their media, oldest first. */
  findProcessing(limit: number): Promise<EvidenceRecord[]>;
  findFinishedUpload(uploadId: string): Promise<FinishedUpload | null>;
  /**
   * Notes, made before blobs are written or deleted, of the prefix they are under; a note is
   * removed when the work is done. What a crash leaves noted is garbage unless an item refers to
   * it (EvidenceService.sweepBlobIntents).
   */
  readonly blobIntents: BlobIntents;
  readonly outbox: OutboxStore;
  ping(): Promise<void>;
}
