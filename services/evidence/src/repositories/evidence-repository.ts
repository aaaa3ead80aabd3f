import type { EvidenceCounts, EventEnvelope, MediaType, ReviewStatus } from '@portal/contracts';
import type { BlobIntents, OutboxStore } from '@portal/platform';
import type { EvidenceChanges, EvidenceRecord } from '../domain/evidence-record.js';

export interface PendingEvent {
  topic: string;
  event: EventEnvelope;
}

export interface EvidenceFilter {
  /** Only this participant's items. */
  ownerId?: string;
  /** Only public items whose media can be shown (ready, or notes) and whose public copy is made (publicCopyOf). */
  publicOnly?: boolean;
  type?: MediaType;
  /** Only items in this review state. */
  reviewStatus?: ReviewStatus;
  /** Only public (true) or only private (false) items, whatever their media. */
  isPublic?: boolean;
  /**
   * Only items whose title or notes have, for each of these words (searchWords), a word that
   * starts with it.
   */
  words?: string[];
}

/** What a change of selected items did, id by id. */
export interface SelectedChange {
  /** The items changed, as they are now (each with its event, written with it). */
  changed: EvidenceRecord[];
  /** Ids of items that needed no change. */
  unchanged: string[];
  /** Ids of no item. */
  missing: string[];
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
  /**
   * Applies the changes; null when the item does not exist (or, with `guard`, when its regions are
   * no longer at that version: an administrator's change on regions changed meanwhile).
   */
  update(id: string, changes: EvidenceChanges, events: PendingEvent[], guard?: { facesVersion: number }): Promise<EvidenceRecord | null>;
  delete(id: string, events: PendingEvent[]): Promise<EvidenceRecord | null>;
  list(filter: EvidenceFilter, limit: number, cursor?: string): Promise<EvidencePage>;
  /**
   * Publishes or unpublishes the given items and marks them reviewed. Each item changes on its
   * own, all or nothing, with the events `eventsFor` makes for it (given the item as it is now);
   * an item that already had that visibility is only marked reviewed (no event).
   */
  setVisibility(ids: string[], isPublic: boolean, eventsFor: (record: EvidenceRecord) => PendingEvent[]): Promise<SelectedChange>;
  /** Marks the given items reviewed, each with its events; items reviewed already are unchanged. */
  markReviewed(ids: string[], eventsFor: (record: EvidenceRecord) => PendingEvent[]): Promise<SelectedChange>;
  /** How many items wait for review, and how many are public and private. */
  counts(): Promise<EvidenceCounts>;
  /** Sets every item's visibility and marks every item reviewed; answers how many changed visibility. */
  setAllVisibility(isPublic: boolean, events: (changed: number) => PendingEvent[]): Promise<number>;
  /**
   * Applies a media result only if the item is still at that revision (and, with
   * `onlyIfDisplayIn`, only if its display key is one of those: a video's first, remuxed copy
   * never replaces the 720p copy that followed it), and with `onlyIfFacesVersion` only while its
   * regions are at that version (public copies made for older regions are not taken); answers the
   * updated item.
   */
  applyMediaResult(
    id: string,
    revision: number,
    changes: EvidenceChanges,
    onlyIfDisplayIn?: (string | null)[],
    onlyIfFacesVersion?: number,
  ): Promise<EvidenceRecord | null>;
  updateAuthor(userId: string, username: string, avatarUrl: string | null): Promise<number>;
  /** Deletes every item of a participant; answers what was deleted (for the blobs). */
  deleteByOwner(userId: string, events: (records: EvidenceRecord[]) => PendingEvent[]): Promise<EvidenceRecord[]>;
  /** Items still waiting for their media, oldest first. */
  findProcessing(limit: number): Promise<EvidenceRecord[]>;
  /** Items checked for faces whose blurred public copies are still to be made (again), oldest first. */
  findBlurPending(limit: number): Promise<EvidenceRecord[]>;
  /**
   * Hides from the public every photo and video processed before faces were checked (`face_check`
   * null) that is not hidden yet (`public_blur` none becomes pending), with the events `events`
   * makes for how many; answers how many.
   */
  holdUncheckedPictures(events: (held: number) => PendingEvent[]): Promise<number>;
  /** Ready items of this type processed before faces were checked, oldest first. */
  findUncheckedPictures(mediaType: MediaType, limit: number): Promise<EvidenceRecord[]>;
  /** How many items of this type (a photo or a video) were processed before faces were checked and are not checked yet. */
  countUncheckedPictures(mediaType: MediaType): Promise<number>;
  findFinishedUpload(uploadId: string): Promise<FinishedUpload | null>;
  /** Stores events that belong to no change of an item (for example the record of an export). */
  appendEvents(events: PendingEvent[]): Promise<void>;
  /**
   * Notes, made before blobs are written or deleted, of the prefix they are under; a note is
   * removed when the work is done. What a crash leaves noted is garbage unless an item refers to
   * it (EvidenceService.sweepBlobIntents).
   */
  readonly blobIntents: BlobIntents;
  readonly outbox: OutboxStore;
  ping(): Promise<void>;
}
