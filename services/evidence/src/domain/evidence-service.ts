import { randomUUID } from 'node:crypto';
import { rm, stat } from 'node:fs/promises';
import { buffer } from 'node:stream/consumers';
import {
  MEDIA_TYPES,
  MESSAGES,
  NO_DERIVATIVES,
  TOPICS,
  faceRegionsSchema,
  isAdminRole,
  mediaBlurredData,
  regionsInForce,
  mediaQueueKindFor,
  type EvidenceChangedData,
  type EvidenceCounts,
  type EvidenceDeletedData,
  type EvidenceReviewedData,
  type EvidenceVisibilityData,
  type EditFacesRequest,
  type EvidenceFaces,
  type FaceBlurMode,
  type FaceRegion,
  type FaceRegions,
  type MediaBlurredData,
  type MediaJob,
  type MediaQueueSet,
  type MediaProcessedData,
  type MediaStillsData,
  type MediaType,
  type UserUpdatedData,
} from '@portal/contracts';
import {
  HttpError,
  auditEvent,
  badRequest,
  createEvent,
  formatBytes,
  forbidden,
  isHandedBackTooOften,
  notFound,
  payloadTooLarge,
  sweepBlobIntents,
  type BlobStore,
  type CallerIdentity,
  type JobQueue,
  type Logger,
  type MediaCaps,
} from '@portal/platform';
import {
  NO_MEDIA,
  NO_PROCESSED_MEDIA,
  NO_PUBLIC_COPIES,
  isPubliclyShown,
  mediaKeyOf,
  publicCopyOf,
  remuxedDisplayKey,
  uncheckedFaces,
  faceCheckOutcome,
  publicCopyFields,
  remuxedVersion,
  type EvidenceChanges,
  type EvidenceRecord,
  type MediaVariant,
} from './evidence-record.js';
import { classifyMediaFile, type ClassifiedFile } from './media-classifier.js';
import type { AuthorDirectory } from '../repositories/author-directory.js';
import type {
  EvidenceFilter,
  EvidencePage,
  EvidenceRepository,
  PendingEvent,
  SelectedChange,
} from '../repositories/evidence-repository.js';
import { wordsOf } from './search-words.js';

/** The lists' filters as the HTTP layer reads them; `q` is the search text as typed. */
export type EvidenceListFilter = Omit<EvidenceFilter, 'words'> & { q?: string };

export interface MediaLimits {
  image: number;
  video: number;
  audio: number;
}

export interface EvidenceServiceDeps {
  evidence: EvidenceRepository;
  authors: AuthorDirectory;
  blobs: BlobStore;
  /** The media queues by kind of work (images to stills, video and audio to av). */
  mediaQueues: MediaQueueSet<JobQueue<MediaJob>>;
  limits: MediaLimits;
  /** Longest video and recording, most tracks in a file (the upload check refuses files over them). */
  caps: MediaCaps;
  /** Items processed before faces were checked: checked when `auto` (not given: left as they are). */
  olderFaceChecks?: OlderFaceChecks;
  logger: Logger;
  onEventsCommitted: () => void;
}

/** FACE_BLUR and FACE_CHECK_OLDER_AT_ONCE, as the evidence service reads them (checkOlderPictures). */
export interface OlderFaceChecks {
  mode: FaceBlurMode;
  /** At most this many photos, and this many videos, of those processed before faces were checked are in the media queues at a time. */
  atOnce: number;
}

export interface EvidenceInput {
  title: string;
  notes: string;
  location: string | null;
}

/** A file the HTTP layer received completely: a local file the service takes over (and removes). */
export interface ReceivedFile {
  path: string;
}

const KIND_NAMES: Record<Exclude<MediaType, 1>, { noun: string; plural: string }> = {
  2: { noun: 'a photo', plural: 'Photos' },
  3: { noun: 'a video', plural: 'Videos' },
  4: { noun: 'an audio recording', plural: 'Audio recordings' },
};

export function jobIdFor(evidenceId: string, revision: number): string {
  return `${evidenceId}.r${revision}`;
}

/** The job that makes an item's public copies again for a version of its regions. */
export function blurJobIdFor(evidenceId: string, revision: number, facesVersion: number): string {
  return `${evidenceId}.r${revision}.faces-v${facesVersion}`;
}

/** The job that looks for the faces of an item processed before faces were checked. */
export function faceCheckJobIdFor(evidenceId: string, revision: number): string {
  return `${evidenceId}.r${revision}.faces-check`;
}

/**
 * Whether an item at this revision waits for its first face check: a new one (`pending`), or one
 * processed before faces were checked (null; a job queued by that release and processed by this
 * one's worker checks it as a new one).
 */
const awaitsFirstCheck = (record: EvidenceRecord | null, revision: number): boolean =>
  record?.media_revision === revision && (record.face_check === 'pending' || record.face_check === null);

/** An item's picture: only photos and videos have faces. */
const hasPicture = (record: Pick<EvidenceRecord, 'media_type'>) =>
  record.media_type === MEDIA_TYPES.image || record.media_type === MEDIA_TYPES.video;

const conflict = (message: string) => new HttpError(409, 'conflict', message);

/** Where an item's blobs are: all of them, and those of one revision of its media. */
const itemPrefix = (id: string) => `evidence/${id}/`;
const revisionPrefix = (id: string, revision: number) => `evidence/${id}/r${revision}/`;
const INTENT_PREFIX = /^evidence\/([^/]+)\/(?:r(\d+)\/)?$/;
/** A note of one blob of a revision (a video's first display copy, replaced by its 720p copy). */
const INTENT_KEY = /^evidence\/([^/]+)\/r(\d+)\/[^/]+$/;

/** The evidence use cases. Ownership and roles are checked here, on the server. */
export class EvidenceService {
  constructor(private readonly deps: EvidenceServiceDeps) {}

  get largestUpload(): number {
    return Math.max(this.deps.limits.image, this.deps.limits.video, this.deps.limits.audio);
  }

  /**
   * A participant adds evidence only after the onboarding video (SPEC's flow; the web app leads
   * them there). Administrators may always.
   */
  assertMayAddEvidence(caller: CallerIdentity): void {
    if (!isAdminRole(caller.role) && caller.videoWatched !== true) throw forbidden(MESSAGES.watchVideoFirst);
  }

  /**
   * A note. With an idempotency key, a note the owner already made with that key is answered
   * instead of a second one (a phone that sent it again after a lost answer makes one item).
   */
  async createNote(
    caller: CallerIdentity,
    input: EvidenceInput,
    idempotencyKey?: string,
  ): Promise<{ record: EvidenceRecord; created: boolean }> {
    this.assertMayAddEvidence(caller);
    if (idempotencyKey) {
      const existing = await this.deps.evidence.findByIdempotencyKey(caller.userId, idempotencyKey);
      if (existing) return { record: existing, created: false };
    }
    const record = await this.newRecord(caller, input, MEDIA_TYPES.note);
    try {
      await this.deps.evidence.create(record, [this.changedEvent('evidence.created', record)], undefined, idempotencyKey);
    } catch (error) {
      const raced = idempotencyKey ? await this.deps.evidence.findByIdempotencyKey(caller.userId, idempotencyKey) : null;
      if (raced) return { record: raced, created: false };
      throw error;
    }
    this.deps.onEventsCommitted();
    return { record, created: true };
  }

  /**
   * Files a received upload as a new item: decides its type from the bytes, checks the limit for
   * that type, stores the original privately and hands it to the media worker. With an upload id
   * (resumable uploads) it is idempotent: the same upload never makes two items. With an
   * idempotency key (the client's name for this piece of evidence) it is idempotent across
   * uploads too: a second upload of the same capture answers the item the first one made.
   */
  async createFromFile(
    caller: CallerIdentity,
    file: ReceivedFile,
    input: EvidenceInput,
    options: { uploadId?: string; idempotencyKey?: string } = {},
  ): Promise<EvidenceRecord> {
    try {
      this.assertMayAddEvidence(caller);
      if (options.uploadId) {
        const finished = await this.deps.evidence.findFinishedUpload(options.uploadId);
        const existing = finished ? await this.deps.evidence.findById(finished.evidenceId) : null;
        if (existing) return existing;
      }
      if (options.idempotencyKey) {
        const existing = await this.deps.evidence.findByIdempotencyKey(caller.userId, options.idempotencyKey);
        if (existing) return existing;
      }
      const { size, classified } = await this.inspect(file);
      const record = await this.newRecord(caller, input, classified.media_type);
      Object.assign(record, await this.storeOriginal(record.id, 1, file, classified, size));
      const raced = await this.deps.evidence
        .create(
          record,
          [this.changedEvent('evidence.created', record)],
          options.uploadId ? { uploadId: options.uploadId, evidenceId: record.id, size } : undefined,
          options.idempotencyKey,
        )
        .then(
          () => null,
          async (error: unknown) => {
            await this.removeBlobs(revisionPrefix(record.id, 1));
            // Two uploads of the same capture finished at once: the other one made the item.
            const raced = options.idempotencyKey
              ? await this.deps.evidence.findByIdempotencyKey(caller.userId, options.idempotencyKey)
              : null;
            if (raced) return raced;
            throw error;
          },
        );
      if (raced) {
        await this.deps.evidence.blobIntents.remove(revisionPrefix(record.id, 1));
        return raced;
      }
      // The item refers to its original now: the note made before writing it is done with.
      await this.deps.evidence.blobIntents.remove(revisionPrefix(record.id, 1));
      this.deps.onEventsCommitted();
      await this.enqueue(record, classified.demuxer);
      return record;
    } finally {
      await rm(file.path, { force: true });
    }
  }

  listOwn(caller: CallerIdentity, filter: { type?: MediaType; q?: string }, limit: number, cursor?: string): Promise<EvidencePage> {
    return this.deps.evidence.list({ ownerId: caller.userId, type: filter.type, words: wordsOf(filter.q) }, limit, cursor);
  }

  listPublic(filter: { type?: MediaType; q?: string }, limit: number, cursor?: string): Promise<EvidencePage> {
    return this.deps.evidence.list({ publicOnly: true, type: filter.type, words: wordsOf(filter.q) }, limit, cursor);
  }

  /** Administrators: everything, or one participant's items, by review state, visibility and words. */
  listAll({ q, ...filter }: EvidenceListFilter, limit: number, cursor?: string): Promise<EvidencePage> {
    return this.deps.evidence.list({ ...filter, words: wordsOf(q) }, limit, cursor);
  }

  /** Administrators: the review queue and the archive at a glance. */
  counts(): Promise<EvidenceCounts> {
    return this.deps.evidence.counts();
  }

  async update(
    caller: CallerIdentity,
    id: string,
    input: { title: string; notes: string },
    file: ReceivedFile | undefined,
  ): Promise<EvidenceRecord> {
    try {
      const current = await this.ownedOrAdministered(caller, id);
      const changes: EvidenceChanges = { title: input.title, notes: input.notes, updated_at: new Date().toISOString() };
      // A participant's own edit is new to the moderators: a published item leaves the archive
      // until an administrator publishes it again (what was approved is not what it shows now).
      if (!isAdminRole(caller.role)) Object.assign(changes, { is_public: false, review_status: 'new' } satisfies EvidenceChanges);
      let replaced: { revision: number; demuxer: string | null } | undefined;
      if (file) {
        if (current.user_id !== caller.userId) throw forbidden('Only the participant who uploaded it can replace the file');
        if (current.media_type === MEDIA_TYPES.note)
          throw badRequest('A note has no file to replace', { file: 'A note has no file to replace' });
        const { size, classified } = await this.inspect(file);
        if (classified.media_type !== current.media_type) {
          const message = `The new file must be ${KIND_NAMES[current.media_type as 2 | 3 | 4].noun}, like the one it replaces`;
          throw badRequest(message, { file: message });
        }
        const revision = current.media_revision + 1;
        // The old revision's blobs go once the new one is filed; noted first, so that a crash in
        // between cannot leave them behind (the sweep keeps whichever revision the item is at).
        await this.deps.evidence.blobIntents.add(revisionPrefix(id, current.media_revision));
        Object.assign(changes, await this.storeOriginal(current.id, revision, file, classified, size));
        replaced = { revision: current.media_revision, demuxer: classified.demuxer };
      }
      // If the change is not filed, the new revision's blobs go and the old ones stay.
      const abandon = async () => {
        if (!replaced) return;
        await this.removeBlobs(revisionPrefix(id, replaced.revision + 1));
        await this.deps.evidence.blobIntents.remove(revisionPrefix(id, replaced.revision));
      };
      const updated = await this.deps.evidence
        .update(id, changes, [
          this.changedEvent('evidence.updated', { ...current, ...changes }),
          ...(isAdminRole(caller.role) ? [this.editedAudit(caller, current, changes)] : []),
        ])
        .catch(async (error: unknown) => {
          await abandon();
          throw error;
        });
      if (!updated) {
        await abandon();
        throw notFound(MESSAGES.evidenceNotFound);
      }
      this.deps.onEventsCommitted();
      if (replaced) {
        await this.deps.evidence.blobIntents.remove(revisionPrefix(id, replaced.revision + 1));
        await this.enqueue(updated, replaced.demuxer);
        await this.removeBlobs(revisionPrefix(id, replaced.revision));
      }
      return updated;
    } finally {
      if (file) await rm(file.path, { force: true });
    }
  }

  async delete(caller: CallerIdentity, id: string): Promise<void> {
    const current = await this.ownedOrAdministered(caller, id);
    const data: EvidenceDeletedData = { evidenceId: id, userId: current.user_id };
    // Noted before the item goes, so that its blobs go too even if the process dies right after.
    await this.deps.evidence.blobIntents.add(itemPrefix(id));
    const deleted = await this.deps.evidence.delete(id, [
      { topic: TOPICS.evidence, event: createEvent({ type: 'evidence.deleted', key: id, data }) },
      ...(isAdminRole(caller.role)
        ? [
            auditEvent({
              actor: caller,
              action: 'evidence.delete',
              target: { type: 'evidence', id, label: current.title },
              subjectUserId: current.user_id,
              before: { title: current.title, notes: current.notes, is_public: current.is_public, author: current.username },
            }),
          ]
        : []),
    ]);
    if (!deleted) {
      await this.deps.evidence.blobIntents.remove(itemPrefix(id));
      throw notFound(MESSAGES.evidenceNotFound);
    }
    this.deps.onEventsCommitted();
    await this.removeBlobs(itemPrefix(id));
  }

  async toggleVisibility(caller: CallerIdentity, id: string): Promise<EvidenceRecord> {
    const current = await this.deps.evidence.findById(id);
    if (!current) throw notFound(MESSAGES.evidenceNotFound);
    const is_public = !current.is_public;
    const data: EvidenceVisibilityData = { evidenceId: id, is_public, changed: 1 };
    const updated = await this.deps.evidence.update(id, { is_public, review_status: 'reviewed', updated_at: new Date().toISOString() }, [
      { topic: TOPICS.evidence, event: createEvent({ type: 'evidence.visibility-changed', key: id, data }) },
      auditEvent({
        actor: caller,
        action: is_public ? 'evidence.publish' : 'evidence.unpublish',
        target: { type: 'evidence', id, label: current.title },
        subjectUserId: current.user_id,
        before: { is_public: current.is_public },
        after: { is_public },
      }),
    ]);
    if (!updated) throw notFound(MESSAGES.evidenceNotFound);
    this.deps.onEventsCommitted();
    return updated;
  }

  async setAllVisibility(caller: CallerIdentity, is_public: boolean): Promise<number> {
    const audit = (changed: number) =>
      auditEvent({
        actor: caller,
        action: is_public ? 'evidence.publish-all' : 'evidence.unpublish-all',
        target: { type: 'archive', id: null, label: is_public ? 'Make All Public' : 'Make All Private' },
        details: { changed },
      });
    const changed = await this.deps.evidence.setAllVisibility(is_public, (count) => {
      const data: EvidenceVisibilityData = { evidenceId: null, is_public, changed: count };
      return [{ topic: TOPICS.evidence, event: createEvent({ type: 'evidence.visibility-changed', key: 'all', data }) }, audit(count)];
    });
    // Nothing to change is still an act an administrator did.
    if (changed === 0) await this.deps.evidence.appendEvents([audit(0)]);
    this.deps.onEventsCommitted();
    return changed;
  }

  /**
   * Publishes or unpublishes the chosen items (administrators). Each item changes on its own with
   * its own evidence.visibility-changed event and audit entry, as one item's publishing does; ids
   * of no item are reported, not refused. New items already at that visibility are marked reviewed.
   */
  async setSelectedVisibility(caller: CallerIdentity, ids: string[], is_public: boolean): Promise<SelectedChange> {
    const result = await this.deps.evidence.setVisibility(ids, is_public, (record) => {
      const data: EvidenceVisibilityData = { evidenceId: record.id, is_public, changed: 1 };
      return [
        { topic: TOPICS.evidence, event: createEvent({ type: 'evidence.visibility-changed', key: record.id, data }) },
        auditEvent({
          actor: caller,
          action: is_public ? 'evidence.publish' : 'evidence.unpublish',
          target: { type: 'evidence', id: record.id, label: record.title },
          subjectUserId: record.user_id,
          before: { is_public: !is_public },
          after: { is_public },
        }),
      ];
    });
    if (result.changed.length > 0) this.deps.onEventsCommitted();
    // An item already at that visibility is still reviewed by the act: recorded as "Mark reviewed"
    // (its event and audit entry), for the new ones among them.
    if (result.unchanged.length > 0) await this.markReviewed(caller, result.unchanged);
    return result;
  }

  /** Marks the chosen items reviewed without changing their visibility (administrators), each recorded in the audit log. */
  async markReviewed(caller: CallerIdentity, ids: string[]): Promise<SelectedChange> {
    const result = await this.deps.evidence.markReviewed(ids, (record) => {
      const data: EvidenceReviewedData = { evidenceId: record.id, review_status: 'reviewed' };
      return [
        { topic: TOPICS.evidence, event: createEvent({ type: 'evidence.reviewed', key: record.id, data }) },
        auditEvent({
          actor: caller,
          action: 'evidence.mark-reviewed',
          target: { type: 'evidence', id: record.id, label: record.title },
          subjectUserId: record.user_id,
          before: { review_status: 'new' },
          after: { review_status: 'reviewed' },
        }),
      ];
    });
    if (result.changed.length > 0) this.deps.onEventsCommitted();
    return result;
  }

  /** An item for someone who may see it: its owner, an administrator, or anyone once it is public. */
  async readable(caller: CallerIdentity | undefined, id: string): Promise<EvidenceRecord> {
    const record = await this.deps.evidence.findById(id);
    const privileged = record !== null && caller !== undefined && (caller.userId === record.user_id || isAdminRole(caller.role));
    if (!record || (!privileged && !isPubliclyShown(record))) throw notFound(MESSAGES.evidenceNotFound);
    return record;
  }

  /**
   * Which blob a caller may have for an item's media, and how it may be cached. A private item is
   * for its owner and administrators only; the original is never for the public. Anyone else gets
   * a 404, which does not tell whether the item exists.
   *
   * `version` is the URL's `v`: a player that started on a video's first (remuxed) display copy
   * keeps getting that copy's bytes under its URL after the 720p copy has replaced it, for as long
   * as the copy is kept (an hour at least: see applyMediaResult); then the current copy.
   */
  async mediaFor(caller: CallerIdentity | undefined, id: string, variant: MediaVariant, version?: string) {
    const record = await this.deps.evidence.findById(id);
    if (!record) throw notFound(MESSAGES.evidenceNotFound);
    const privileged = caller !== undefined && (caller.userId === record.user_id || isAdminRole(caller.role));
    // The public gets the copies publicCopyOf names, nothing else: the picture as it is only when
    // nothing is to be hidden (or consent is on record), the blurred copies otherwise. A URL always
    // gives the same bytes whoever asks; what it may be cached as follows from the item alone.
    const shown = record.media_status === 'ready' && isPubliclyShown(record) ? publicCopyOf(record) : 'pending';
    const publiclyVisible = variant === 'original' ? false : variant.startsWith('blurred-') ? shown === 'blurred' : shown === 'plain';
    if (!privileged && !publiclyVisible) throw notFound(MESSAGES.evidenceNotFound);
    let key = mediaKeyOf(record, variant);
    if (!key) throw notFound('This item has no such media yet');
    if (variant === 'display' && version === remuxedVersion(record.media_revision)) {
      const remuxed = remuxedDisplayKey(record.id, record.media_revision);
      if (key !== remuxed && (await this.deps.blobs.stat(remuxed))) key = remuxed;
    }
    return { key, revision: record.media_revision, cache: publiclyVisible ? ('public' as const) : ('private' as const), record };
  }

  // --- reactions to other services -------------------------------------------------------

  /**
   * The media worker's report about one revision of an item's media. Idempotent. A video may be
   * reported twice: ready with its first display copy (a remux of its streams), then with the
   * 720p copy that replaces it. The first never undoes the second (a job run again after a crash
   * reports it again), and once replaced, the first copy is noted for deletion: the sweep of
   * blob intents removes it when the note is an hour old (BLOB_INTENT_GRACE_MS), so a player
   * that started on it (and any cache, max-age one hour) has it to the end.
   */
  async applyMediaResult(result: MediaProcessedData): Promise<void> {
    const changes: EvidenceChanges =
      result.status === 'ready'
        ? {
            media_status: 'ready',
            media_error: null,
            media_type: result.media_type,
            display_key: result.display?.key ?? null,
            display_type: result.display?.contentType ?? null,
            thumb_key: result.thumbnail?.key ?? null,
            poster_key: result.poster?.key ?? null,
            placeholder: result.placeholder,
            width: result.width,
            height: result.height,
            duration: result.duration,
          }
        : { media_status: 'failed', media_error: result.error ?? 'The file could not be processed' };
    if (result.status === 'ready' && result.faces) {
      // The face check of this revision, taken once: a job run again after an administrator
      // changed the regions (its report repeated) does not undo their change.
      const current = await this.deps.evidence.findById(result.evidenceId);
      if (awaitsFirstCheck(current, result.revision)) {
        Object.assign(changes, faceCheckOutcome(result.faces, result.public));
      }
    }
    const first = result.status === 'ready' && result.display_copy === 'remuxed';
    const updated = await this.deps.evidence.applyMediaResult(
      result.evidenceId,
      result.revision,
      changes,
      first ? [null, result.display?.key ?? null] : undefined,
    );
    if (updated) {
      if (result.status === 'ready' && result.display_copy === 'transcoded') {
        await this.deps.evidence.blobIntents.add(remuxedDisplayKey(result.evidenceId, result.revision));
      }
      this.deps.logger.info(
        { evidenceId: result.evidenceId, revision: result.revision, status: result.status, display: result.display_copy },
        'media result applied',
      );
      return;
    }
    // The item was deleted, or its file replaced, while the worker made these: nobody refers to
    // them (the deletion or replacement removed what was there when it happened).
    const current = await this.deps.evidence.findById(result.evidenceId);
    if (current?.media_revision !== result.revision) await this.deps.blobs.deletePrefix(revisionPrefix(result.evidenceId, result.revision));
  }

  /**
   * A video's poster, thumbnail and placeholder, made before its display copy: the item shows them
   * (to its owner and administrators) while it is still processing. Applied only while the item
   * is at that revision and has no display copy, so a late or repeated announcement never
   * changes an item that is ready (its ready result carries the same stills).
   */
  async applyMediaStills(stills: MediaStillsData): Promise<void> {
    const updated = await this.deps.evidence.applyMediaResult(
      stills.evidenceId,
      stills.revision,
      { thumb_key: stills.thumbnail.key, poster_key: stills.poster.key, placeholder: stills.placeholder },
      [null],
    );
    if (updated) this.deps.logger.info({ evidenceId: stills.evidenceId, revision: stills.revision }, 'media stills applied');
  }

  /**
   * Public copies made again for a version of an item's regions (an administrator changed them),
   * or a first face check that could not be made.
   * Taken only while the item is at that revision and version; the copies they replace are noted
   * for deletion once no cache may still hold them (as a video's first copy, an hour). Copies of
   * a version already replaced go at once. A failure leaves what the public sees as it was
   * (nothing, after a box was added) and is logged.
   */
  async applyBlurred(result: MediaBlurredData): Promise<void> {
    const made = result.public ? [result.public.display.key, result.public.thumbnail?.key, result.public.poster?.key] : [];
    const firstCheck = (record: EvidenceRecord | null): boolean => result.version === 0 && awaitsFirstCheck(record, result.revision);
    if (result.error) {
      // A first check that could not be made (a video without its converted copy): said so to the
      // administrators; the public still gets nothing without consent.
      const current = await this.deps.evidence.findById(result.evidenceId);
      if (firstCheck(current)) {
        await this.deps.evidence.applyMediaResult(result.evidenceId, result.revision, { face_check: 'failed' }, undefined, 0);
      }
      this.deps.logger.warn(
        { evidenceId: result.evidenceId, version: result.version, reason: result.error },
        'public copies not made again',
      );
      return;
    }
    const current = await this.deps.evidence.findById(result.evidenceId);
    if (result.faces && !firstCheck(current)) {
      // The check of an item from before faces were checked is taken once (a report repeated by
      // the reconciliation after it was applied changes nothing); copies made for a file replaced
      // or deleted meanwhile go with their revision, as a late media result's do.
      if (current?.media_revision !== result.revision)
        await this.deps.blobs.deletePrefix(revisionPrefix(result.evidenceId, result.revision));
      return;
    }
    const replaced = current ? [current.public_display_key, current.public_thumb_key, current.public_poster_key] : [];
    const updated = await this.deps.evidence.applyMediaResult(
      result.evidenceId,
      result.revision,
      result.faces ? faceCheckOutcome(result.faces, result.public) : publicCopyFields(result.public),
      undefined,
      result.version,
    );
    const stale = updated ? replaced.filter((key) => key && !made.includes(key)) : made;
    for (const key of stale) if (key) await this.deps.evidence.blobIntents.add(key);
    if (updated) this.deps.logger.info({ evidenceId: result.evidenceId, version: result.version }, 'public copies applied');
  }

  // --- faces: the administrators' decisions -------------------------------------------------

  /** An item's faces as the review dialog shows them (administrators). */
  async facesOf(id: string): Promise<EvidenceFaces> {
    const record = await this.deps.evidence.findById(id);
    if (!record) throw notFound(MESSAGES.evidenceNotFound);
    const doc = await this.regionsOf(record);
    return {
      check: record.face_check,
      version: record.faces_version,
      consent: record.faces_consent,
      public_copy: publicCopyOf(record),
      width: doc?.width ?? record.width,
      height: doc?.height ?? record.height,
      duration: doc?.duration ?? record.duration,
      interval: doc?.interval ?? null,
      regions: doc?.regions ?? [],
    };
  }

  /**
   * An administrator's change of an item's regions, on the version they saw: regions removed (no
   * face to hide: a poster on a wall), restored, or boxes added. The public copies are made again
   * for the new version. While they are made, the public sees the item only if the change hid
   * nothing more than before (the copies it has then hide at least as much); after a box is
   * added or a region restored it sees nothing until the new copies exist.
   */
  async editFaces(caller: CallerIdentity, id: string, input: Required<EditFacesRequest>): Promise<EvidenceFaces> {
    const record = await this.deps.evidence.findById(id);
    if (!record) throw notFound(MESSAGES.evidenceNotFound);
    this.assertFacesEditable(record);
    if (input.base !== record.faces_version)
      throw conflict('The faces of this item were changed meanwhile: look at them again, then make your change');
    const doc: FaceRegions = (await this.regionsOf(record)) ?? {
      width: record.width ?? 1,
      height: record.height ?? 1,
      duration: record.media_type === MEDIA_TYPES.video ? record.duration : null,
      interval: record.media_type === MEDIA_TYPES.video ? 0.25 : null,
      regions: [],
    };
    const byId = new Map(doc.regions.map((region) => [region.id, region]));
    for (const regionId of [...input.removed, ...input.restored]) {
      if (!byId.has(regionId)) throw badRequest(`This item has no face region ${regionId}`, { removed: 'Unknown region' });
    }
    const before = regionsInForce(doc.regions).length;
    const hidesMore = input.added.length > 0 || input.restored.some((regionId) => byId.get(regionId)!.removed);
    const regions: FaceRegion[] = doc.regions.map((region) =>
      input.removed.includes(region.id)
        ? { ...region, removed: true }
        : input.restored.includes(region.id)
          ? { ...region, removed: false }
          : region,
    );
    let next = doc.regions.reduce((highest, region) => Math.max(highest, Number(region.id.replace(/\D/g, '')) || 0), 0);
    for (const box of input.added) {
      next++;
      regions.push({ id: `a${next}`, source: 'added', score: null, removed: false, track: [{ t: 0, ...box }] });
    }
    const version = record.faces_version + 1;
    const key = `${revisionPrefix(id, record.media_revision)}faces-v${version}.json`;
    await this.deps.blobs.put(key, Buffer.from(JSON.stringify({ ...doc, regions } satisfies FaceRegions)), {
      contentType: 'application/json',
    });
    const inForce = regionsInForce(regions).length;
    // Nothing left to hide: the picture as it is. Something more to hide: nothing until it is
    // blurred. Less to hide: the copies the public has (they hide more) until the new ones exist.
    const public_blur = inForce === 0 ? 'none' : hidesMore || record.public_blur === 'none' ? 'pending' : record.public_blur;
    const changes: EvidenceChanges = {
      faces_key: key,
      faces_version: version,
      face_count: inForce,
      public_blur,
      ...(inForce === 0 ? NO_PUBLIC_COPIES : {}),
    };
    const updated = await this.deps.evidence.update(
      id,
      changes,
      [
        this.facesChangedEvent({ ...record, ...changes }),
        auditEvent({
          actor: caller,
          action: 'evidence.faces-edit',
          target: { type: 'evidence', id, label: record.title },
          subjectUserId: record.user_id,
          before: { faces: before },
          after: { faces: inForce },
          details: { added: input.added.length, removed: input.removed, restored: input.restored, version },
        }),
      ],
      { facesVersion: record.faces_version },
    );
    if (!updated) throw conflict('The faces of this item were changed meanwhile: look at them again, then make your change');
    this.deps.onEventsCommitted();
    if (inForce > 0) await this.enqueueBlur(updated);
    // The copies the public had are kept for caches until the new ones replace them (applyBlurred).
    if (inForce === 0) {
      for (const old of [record.public_display_key, record.public_thumb_key, record.public_poster_key]) {
        if (old) await this.deps.evidence.blobIntents.add(old);
      }
    }
    return this.facesOf(id);
  }

  /**
   * An administrator records that the faces of an item may be shown (the people consented), or
   * takes that back: the public gets the picture as it is, or the blurred copies again.
   */
  async setFacesConsent(caller: CallerIdentity, id: string, consent: boolean, note?: string): Promise<EvidenceFaces> {
    const record = await this.deps.evidence.findById(id);
    if (!record) throw notFound(MESSAGES.evidenceNotFound);
    if (!hasPicture(record)) throw badRequest('This item has no picture', { consent: 'This item has no picture' });
    if (record.faces_consent !== consent) {
      const updated = await this.deps.evidence.update(
        id,
        { faces_consent: consent },
        [
          this.facesChangedEvent({ ...record, faces_consent: consent }),
          auditEvent({
            actor: caller,
            action: 'evidence.faces-consent',
            target: { type: 'evidence', id, label: record.title },
            subjectUserId: record.user_id,
            before: { faces_may_be_shown: record.faces_consent },
            after: { faces_may_be_shown: consent },
            details: note ? { note } : null,
          }),
        ],
        { facesVersion: record.faces_version },
      );
      if (!updated) throw conflict('The faces of this item were changed meanwhile: look at them again, then make your change');
      this.deps.onEventsCommitted();
    }
    return this.facesOf(id);
  }

  /** The regions of an item's current version; null when none were stored (no face found, not checked). */
  private async regionsOf(record: EvidenceRecord): Promise<FaceRegions | null> {
    if (!record.faces_key) return null;
    const object = await this.deps.blobs.get(record.faces_key);
    if (!object) return null;
    const parsed = faceRegionsSchema.safeParse(JSON.parse((await buffer(object.body)).toString('utf8')));
    if (!parsed.success) {
      this.deps.logger.warn({ evidenceId: record.id, key: record.faces_key }, 'stored face regions could not be read');
      return null;
    }
    return parsed.data;
  }

  private assertFacesEditable(record: EvidenceRecord): void {
    if (!hasPicture(record)) throw badRequest('This item has no picture', { added: 'This item has no picture' });
    if (record.media_status !== 'ready' || record.face_check === 'pending') {
      throw conflict('The faces in this item are still being looked for: try again when its processing is done');
    }
    // A video's blurred copy is made from its 720p copy; a video whose 720p copy could not be made has none.
    if (record.media_type === MEDIA_TYPES.video && record.display_key === remuxedDisplayKey(record.id, record.media_revision)) {
      throw conflict('This video has no converted copy to blur yet: try again when its processing is done');
    }
  }

  private facesChangedEvent(record: EvidenceRecord): PendingEvent {
    const data = { evidenceId: record.id, version: record.faces_version, consent: record.faces_consent, public_copy: publicCopyOf(record) };
    return { topic: TOPICS.evidence, event: createEvent({ type: 'evidence.faces-changed', key: record.id, data }) };
  }

  /** The queue of an item's blur and face check jobs: photos on the stills queue, videos beside their 720p copies. */
  private blurQueueOf(record: Pick<EvidenceRecord, 'media_type'>): JobQueue<MediaJob> {
    return record.media_type === MEDIA_TYPES.image ? this.deps.mediaQueues.stills : this.deps.mediaQueues.transcode;
  }

  /** Queues the job that makes the public copies again for the item's current regions. */
  private async enqueueBlur(record: EvidenceRecord): Promise<void> {
    if (!record.faces_key) return;
    await this.enqueueOnPicture(record, 'blur', blurJobIdFor(record.id, record.media_revision, record.faces_version), {
      faces: { key: record.faces_key, version: record.faces_version },
    });
  }

  /** Queues the first face check of an item processed before faces were checked. */
  private async enqueueFaceCheck(record: EvidenceRecord): Promise<void> {
    await this.enqueueOnPicture(record, 'check-faces', faceCheckJobIdFor(record.id, record.media_revision));
  }

  /** A job on an item's stored pictures (its original, display copy and poster), not a processing of its file. */
  private async enqueueOnPicture(
    record: EvidenceRecord,
    step: 'blur' | 'check-faces',
    jobId: string,
    extra: Pick<MediaJob, 'faces'> = {},
  ): Promise<void> {
    if (!record.original_key) return;
    await this.blurQueueOf(record).add(
      step,
      {
        evidenceId: record.id,
        revision: record.media_revision,
        media_type: record.media_type,
        originalKey: record.original_key,
        outputPrefix: revisionPrefix(record.id, record.media_revision),
        step,
        ...extra,
        ...(record.display_key ? { displayKey: record.display_key } : {}),
        ...(record.poster_key ? { posterKey: record.poster_key } : {}),
      },
      { jobId, attempts: 3, backoff: { type: 'exponential', delay: 5000 } },
    );
  }

  async onUserChanged(data: Pick<UserUpdatedData, 'userId' | 'username' | 'avatar_AWS_URL'>): Promise<void> {
    await this.deps.authors.upsert({ userId: data.userId, username: data.username, avatarUrl: data.avatar_AWS_URL });
    await this.deps.evidence.updateAuthor(data.userId, data.username, data.avatar_AWS_URL);
  }

  /** A deleted participant's items and their files go too. Idempotent. */
  async onUserDeleted(userId: string): Promise<void> {
    // Each item is noted before the deletion, so that its blobs go even if the process dies after
    // it (the event comes again then, but finds no item left to name the blobs).
    const owned: string[] = [];
    let cursor: string | undefined;
    do {
      const page = await this.deps.evidence.list({ ownerId: userId }, 500, cursor);
      owned.push(...page.items.map((record) => record.id));
      cursor = page.nextCursor ?? undefined;
    } while (cursor);
    for (const id of owned) await this.deps.evidence.blobIntents.add(itemPrefix(id));
    // The files first: while the blob store is away this fails, and the event is held and comes
    // again with the items still there to name their files (were the items gone first, the files
    // would be left to the sweep of blob intents, which with a shared database waits an hour).
    for (const id of owned) await this.deps.blobs.deletePrefix(itemPrefix(id));
    const deleted = await this.deps.evidence.deleteByOwner(userId, (records) =>
      records.map((record) => {
        const data: EvidenceDeletedData = { evidenceId: record.id, userId };
        return { topic: TOPICS.evidence, event: createEvent({ type: 'evidence.deleted', key: record.id, data }) };
      }),
    );
    if (deleted.length > 0) this.deps.onEventsCommitted();
    for (const id of new Set([...owned, ...deleted.map((record) => record.id)])) await this.removeBlobs(itemPrefix(id));
    await this.deps.authors.remove(userId);
    this.deps.logger.info({ userId, items: deleted.length }, "deleted a removed user's evidence");
  }

  /**
   * Makes sure every item still processing has its job: enqueues what is missing (a crash between
   * the commit and the enqueue), and takes over the outcome of finished jobs whose report was lost.
   */
  async reconcile(): Promise<void> {
    for (const record of await this.deps.evidence.findProcessing(200)) {
      const id = jobIdFor(record.id, record.media_revision);
      // A job from before the queues were split is still in the old one until a worker takes it.
      const job = (await this.mediaQueueOf(record).getJob(id)) ?? (await this.deps.mediaQueues.legacy.getJob(id));
      if (!job) {
        await this.enqueue(record);
      } else if (job.state === 'failed') {
        // The queue's reason is an error of the worker's own (storage, bus...): for the log only.
        this.deps.logger.warn({ evidenceId: record.id, reason: job.failedReason }, 'media job failed for good');
        // Except one: a job every worker was stopped in the middle of (a video longer than each
        // shutdown's grace period, the workers scaled down meanwhile) says so to its owner.
        await this.applyMediaResult(failedResult(record, isHandedBackTooOften(job.failedReason) ? INTERRUPTED_TOO_OFTEN : undefined));
      } else if (job.state === 'completed' && job.returnValue) {
        await this.applyMediaResult(job.returnValue as MediaProcessedData);
      }
    }
    // Public copies to be made again (an administrator's change whose job was never queued, or
    // whose report was lost).
    for (const record of await this.deps.evidence.findBlurPending(200)) {
      const job = await this.blurQueueOf(record).getJob(blurJobIdFor(record.id, record.media_revision, record.faces_version));
      if (!job) await this.enqueueBlur(record);
      else if (job.state === 'completed' && job.returnValue) await this.applyBlurred(job.returnValue as MediaBlurredData);
      else if (job.state === 'failed')
        this.deps.logger.warn({ evidenceId: record.id, reason: job.failedReason }, 'public copies could not be made again');
    }
    if (this.deps.olderFaceChecks?.mode === 'auto') await this.checkOlderPictures(this.deps.olderFaceChecks.atOnce);
  }

  /**
   * Items processed before faces were checked (`face_check` null): every one hidden from the
   * public at once (`public_blur` pending, as a new item while its faces are looked for; its owner
   * and administrators keep seeing it), then checked by the media worker a few at a time: the
   * oldest `atOnce` photos and `atOnce` videos have a `check-faces` job, and the next ones theirs
   * once these are reported, so that a large archive never floods the media queues ahead of new
   * uploads. The report (`media.blurred`, version 0) sets the check and the public copies as a new
   * item's result does; a lost one is taken from its finished job here, as other results are.
   */
  private async checkOlderPictures(atOnce: number): Promise<void> {
    const held = await this.deps.evidence.holdUncheckedPictures((count) => {
      const data = { evidenceId: null, held: count, public_copy: 'pending' };
      return [{ topic: TOPICS.evidence, event: createEvent({ type: 'evidence.faces-changed', key: 'all', data }) }];
    });
    if (held > 0) {
      this.deps.onEventsCommitted();
      this.deps.logger.info({ items: held }, 'items processed before faces were checked are hidden from the public until checked');
    }
    for (const mediaType of [MEDIA_TYPES.image, MEDIA_TYPES.video]) {
      for (const record of await this.deps.evidence.findUncheckedPictures(mediaType, atOnce)) {
        const queue = this.blurQueueOf(record);
        const job = await queue.getJob(faceCheckJobIdFor(record.id, record.media_revision));
        if (!job) await this.enqueueFaceCheck(record);
        else if (job.state === 'completed') {
          const report = mediaBlurredData.safeParse(job.returnValue);
          if (report.success) await this.applyBlurred(report.data);
          else {
            // Taken during a rolling upgrade by a worker of an earlier release, which knows no
            // face check and processed the file as a new one: queued again for one of this release.
            this.deps.logger.warn(
              { evidenceId: record.id },
              'a face check was taken by a media worker of an earlier release; queued again',
            );
            await queue.removeJobs((entry) => entry.id === job.id);
          }
        } else if (job.state === 'failed') {
          // Tried three times: said so to the administrators (the public gets nothing of it
          // without consent), and the next item takes its place.
          this.deps.logger.warn({ evidenceId: record.id, reason: job.failedReason }, 'the faces of an older item could not be looked for');
          await this.deps.evidence.applyMediaResult(record.id, record.media_revision, { face_check: 'failed' }, undefined, 0);
        }
      }
    }
  }

  /**
   * Blobs are written before the item that refers to them is filed, and deleted after the item
   * goes; each such prefix is noted first (blobIntents.add) and the note removed when done. A note
   * left by a process that died is settled here: the blobs stay if an item refers to them (the
   * item, or its current revision), and go otherwise. Notes made before `before` are settled:
   * at the start of the only process using the store that is all of them; otherwise only notes
   * old enough that no request can still be working on them.
   */
  async sweepBlobIntents(before: Date): Promise<number> {
    const swept = await sweepBlobIntents(this.deps.evidence.blobIntents, before, async (prefix) => {
      const one = INTENT_KEY.exec(prefix);
      if (one) {
        // One blob: kept while the item refers to it.
        const item = await this.deps.evidence.findById(one[1]!);
        const referred =
          item !== null &&
          [
            item.display_key,
            item.thumb_key,
            item.poster_key,
            item.original_key,
            item.faces_key,
            item.public_display_key,
            item.public_thumb_key,
            item.public_poster_key,
          ].includes(prefix);
        if (referred || !(await this.deps.blobs.stat(prefix))) return 0;
        await this.deps.blobs.delete(prefix);
        return 1;
      }
      const match = INTENT_PREFIX.exec(prefix);
      if (!match) return 0;
      const item = await this.deps.evidence.findById(match[1]!);
      const referred = item !== null && (match[2] === undefined || item.media_revision === Number(match[2]));
      return referred ? 0 : this.deps.blobs.deletePrefix(prefix);
    });
    if (swept.notes > 0)
      this.deps.logger.info({ prefixes: swept.notes, blobs: swept.blobs }, 'settled blobs left by an interrupted write or deletion');
    return swept.blobs;
  }

  // --- helpers -----------------------------------------------------------------------------

  /** Deletes the blobs under a prefix, noted first so that a crash midway is finished later. */
  private async removeBlobs(prefix: string): Promise<void> {
    await this.deps.evidence.blobIntents.add(prefix);
    await this.deps.blobs.deletePrefix(prefix);
    await this.deps.evidence.blobIntents.remove(prefix);
  }

  private async ownedOrAdministered(caller: CallerIdentity, id: string): Promise<EvidenceRecord> {
    const record = await this.deps.evidence.findById(id);
    if (!record) throw notFound(MESSAGES.evidenceNotFound);
    if (record.user_id !== caller.userId && !isAdminRole(caller.role)) throw forbidden(MESSAGES.notYourEvidence);
    return record;
  }

  private async inspect(file: ReceivedFile): Promise<{ size: number; classified: ClassifiedFile }> {
    const { size } = await stat(file.path);
    if (size === 0) throw badRequest(MESSAGES.emptyFile, { file: MESSAGES.emptyFile });
    const classified = await classifyMediaFile(file.path, this.deps.caps);
    const limit = { 2: this.deps.limits.image, 3: this.deps.limits.video, 4: this.deps.limits.audio }[classified.media_type];
    if (size > limit) throw payloadTooLarge(`${KIND_NAMES[classified.media_type].plural} can be at most ${formatBytes(limit)}`);
    return { size, classified };
  }

  private async storeOriginal(
    id: string,
    revision: number,
    file: ReceivedFile,
    classified: ClassifiedFile,
    size: number,
  ): Promise<EvidenceChanges> {
    const key = `${revisionPrefix(id, revision)}original`;
    // Noted before the write: if the process dies before the item is filed, the blob is found.
    await this.deps.evidence.blobIntents.add(revisionPrefix(id, revision));
    // putFile: the file store links the received file into place rather than copying it.
    await this.deps.blobs.putFile(key, file.path, { contentType: classified.contentType });
    return {
      media_type: classified.media_type,
      media_status: 'processing',
      media_error: null,
      media_revision: revision,
      original_key: key,
      original_type: classified.contentType,
      original_size: size,
      ...NO_PROCESSED_MEDIA,
      // A new file is a new picture: looked at for faces again, and any consent was for the old one.
      ...uncheckedFaces(classified.media_type),
    };
  }

  /** Where the record's media job goes: a photo waits only for other photos. */
  private mediaQueueOf(record: EvidenceRecord): JobQueue<MediaJob> {
    return this.deps.mediaQueues[mediaQueueKindFor(record.media_type)];
  }

  /**
   * Queues the media job. `demuxer` is what the upload check read the file with; a job queued
   * again after a crash has none, and the worker then lets ffprobe choose among the media
   * demuxers only.
   */
  private async enqueue(record: EvidenceRecord, demuxer: string | null = null): Promise<void> {
    if (!record.original_key || record.media_type === MEDIA_TYPES.note) return;
    await this.mediaQueueOf(record).add(
      'process-media',
      {
        evidenceId: record.id,
        revision: record.media_revision,
        media_type: record.media_type,
        originalKey: record.original_key,
        outputPrefix: `evidence/${record.id}/r${record.media_revision}/`,
        ...(demuxer ? { demuxer } : {}),
      },
      { jobId: jobIdFor(record.id, record.media_revision), attempts: 3, backoff: { type: 'exponential', delay: 5000 } },
    );
  }

  private async newRecord(caller: CallerIdentity, input: EvidenceInput, media_type: MediaType): Promise<EvidenceRecord> {
    const author = await this.deps.authors.find(caller.userId);
    const now = new Date().toISOString();
    return {
      id: randomUUID(),
      user_id: caller.userId,
      username: author?.username ?? caller.username,
      avatar_url: author?.avatarUrl ?? null,
      title: input.title,
      notes: input.notes,
      location: input.location,
      media_type,
      is_public: false,
      review_status: 'new',
      date_posted: now,
      updated_at: now,
      media_status: media_type === MEDIA_TYPES.note ? 'none' : 'processing',
      media_error: null,
      media_revision: 0,
      ...NO_MEDIA,
      ...uncheckedFaces(media_type),
    };
  }

  private editedAudit(caller: CallerIdentity, current: EvidenceRecord, changes: EvidenceChanges): PendingEvent {
    const before: Record<string, unknown> = {};
    const after: Record<string, unknown> = {};
    for (const field of ['title', 'notes', 'media_revision'] as const) {
      if (changes[field] === undefined || changes[field] === current[field]) continue;
      before[field] = current[field];
      after[field] = changes[field];
    }
    return auditEvent({
      actor: caller,
      action: 'evidence.edit',
      target: { type: 'evidence', id: current.id, label: changes.title ?? current.title },
      subjectUserId: current.user_id,
      before,
      after,
    });
  }

  private changedEvent(type: 'evidence.created' | 'evidence.updated', record: EvidenceRecord): PendingEvent {
    const data: EvidenceChangedData = {
      evidenceId: record.id,
      userId: record.user_id,
      media_type: record.media_type,
      is_public: record.is_public,
      title: record.title,
    };
    return { topic: TOPICS.evidence, event: createEvent({ type, key: record.id, data }) };
  }
}

/** The media_error of an item whose processing was interrupted by shutting-down workers until its tries ran out. */
export const INTERRUPTED_TOO_OFTEN =
  'The file could not be processed: its processing was interrupted too many times (the media workers were stopped before it could finish). Upload it again later.';

function failedResult(record: EvidenceRecord, error = 'The file could not be processed'): MediaProcessedData {
  return {
    evidenceId: record.id,
    revision: record.media_revision,
    status: 'failed',
    media_type: record.media_type,
    error,
    ...NO_DERIVATIVES,
  };
}
