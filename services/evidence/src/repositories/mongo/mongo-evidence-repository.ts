import { Schema, type Connection, type Model } from 'mongoose';
import { MEDIA_TYPES, type EvidenceCounts, type MediaType } from '@portal/contracts';
import {
  MongoBlobIntents,
  MongoOutboxStore,
  decodeCursor,
  embeddedEventSchema,
  encodeCursor,
  outboxPush,
  toEmbedded,
  type EmbeddedEvent,
  serialWrite,
} from '@portal/platform';
import type { EvidenceChanges, EvidenceRecord } from '../../domain/evidence-record.js';
import type {
  EvidenceFilter,
  EvidencePage,
  EvidenceRepository,
  FinishedUpload,
  PendingEvent,
  SelectedChange,
} from '../evidence-repository.js';
import { searchWords } from '../../domain/search-words.js';

interface EvidenceDocument extends Omit<EvidenceRecord, 'id'> {
  _id: string;
  upload_id: string | null;
  upload_size: number | null;
  /**
   * The owner's idempotency key as "<user_id> <key>", or the item's own id when it has none or
   * is deleted: always set and unique (FerretDB has no partial or sparse unique indexes).
   */
  idempotency_key?: string;
  /** The words of title and notes (searchWords), for search: see searchTermsOf. */
  search_terms: string[];
  _outbox: EmbeddedEvent[];
  _outboxVersion: number;
  _deleted?: boolean;
}

const evidenceSchema = new Schema<EvidenceDocument>(
  {
    _id: String,
    user_id: { type: String, required: true },
    username: String,
    avatar_url: { type: String, default: null },
    title: String,
    notes: String,
    location: { type: String, default: null },
    media_type: Number,
    is_public: Boolean,
    review_status: { type: String, default: 'new' },
    date_posted: String,
    updated_at: String,
    media_status: String,
    media_error: { type: String, default: null },
    media_revision: Number,
    original_key: { type: String, default: null },
    original_type: { type: String, default: null },
    original_size: { type: Number, default: null },
    display_key: { type: String, default: null },
    display_type: { type: String, default: null },
    thumb_key: { type: String, default: null },
    poster_key: { type: String, default: null },
    placeholder: { type: String, default: null },
    width: { type: Number, default: null },
    height: { type: Number, default: null },
    duration: { type: Number, default: null },
    face_check: { type: String, default: null },
    face_count: { type: Number, default: null },
    faces_key: { type: String, default: null },
    faces_version: { type: Number, default: 0 },
    faces_consent: { type: Boolean, default: false },
    public_blur: { type: String, default: 'none' },
    public_display_key: { type: String, default: null },
    public_thumb_key: { type: String, default: null },
    public_poster_key: { type: String, default: null },
    public_placeholder: { type: String, default: null },
    upload_id: { type: String, default: null },
    upload_size: { type: Number, default: null },
    idempotency_key: String,
    search_terms: { type: [String], default: [] },
    _outbox: { type: [embeddedEventSchema], default: [] },
    _outboxVersion: { type: Number, default: 0 },
    _deleted: { type: Boolean, default: false },
  },
  { versionKey: false, minimize: false },
);
evidenceSchema.index({ date_posted: -1, _id: -1 }, { name: 'by_date' });
evidenceSchema.index({ user_id: 1, date_posted: -1, _id: -1 }, { name: 'by_owner' });
evidenceSchema.index({ is_public: 1, date_posted: -1, _id: -1 }, { name: 'by_visibility' });
evidenceSchema.index({ media_status: 1, updated_at: 1 }, { name: 'by_media_status' });
evidenceSchema.index({ public_blur: 1, updated_at: 1 }, { name: 'by_public_blur' });
evidenceSchema.index({ face_check: 1, media_type: 1, date_posted: 1, _id: 1 }, { name: 'by_face_check' });
evidenceSchema.index({ upload_id: 1 }, { name: 'by_upload' });
evidenceSchema.index({ idempotency_key: 1 }, { name: 'by_idempotency_key', unique: true });

const keyOf = (userId: string, key: string) => `${userId} ${key}`;

evidenceSchema.index({ review_status: 1, date_posted: -1, _id: -1 }, { name: 'by_review_status' });
// Multikey: one entry per word. A prefix regex (^word) on it is an index range scan.
evidenceSchema.index({ search_terms: 1 }, { name: 'by_search_term' });

/**
 * Search without $text: FerretDB (the distributed test server) has no text indexes, so each item
 * carries its words (searchWords of title and notes) and a query asks, word by word, for a term
 * that starts with it. The same words and the same rule as SQLite's FTS5 prefix queries.
 */
function searchTermsOf(record: Pick<EvidenceRecord, 'title' | 'notes'>): string[] {
  return searchWords(`${record.title} ${record.notes}`);
}

const escapeRegex = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

interface AuthorDocument {
  _id: string;
  username: string;
  avatar_url: string | null;
}

const LIVE = { _deleted: { $ne: true } };

function toRecord(document: EvidenceDocument | null): EvidenceRecord | null {
  if (!document || document._deleted) return null;
  const {
    _id,
    upload_id: _upload,
    upload_size: _size,
    idempotency_key: _key,
    search_terms: _terms,
    _outbox,
    _outboxVersion,
    _deleted,
    ...rest
  } = document;
  // Documents written before the review queue existed: public ones were published by an administrator.
  const review_status = rest.review_status ?? (rest.is_public ? 'reviewed' : 'new');
  // Documents written before faces were checked: never checked, shown as they are.
  const faces = {
    face_check: rest.face_check ?? null,
    face_count: rest.face_count ?? null,
    faces_key: rest.faces_key ?? null,
    faces_version: rest.faces_version ?? 0,
    faces_consent: rest.faces_consent ?? false,
    public_blur: rest.public_blur ?? 'none',
    public_display_key: rest.public_display_key ?? null,
    public_thumb_key: rest.public_thumb_key ?? null,
    public_poster_key: rest.public_poster_key ?? null,
    public_placeholder: rest.public_placeholder ?? null,
  };
  return { id: _id, ...rest, ...faces, review_status, media_type: rest.media_type as MediaType } as EvidenceRecord;
}

/** Evidence in MongoDB (mongoose): one document per item with its pending events inside. */
export class MongoEvidenceRepository implements EvidenceRepository {
  readonly outbox: MongoOutboxStore;
  readonly blobIntents: MongoBlobIntents;
  private readonly items: Model<EvidenceDocument>;

  constructor(private readonly connection: Connection) {
    this.items = connection.model<EvidenceDocument>('Evidence', evidenceSchema, 'evidence');
    this.blobIntents = new MongoBlobIntents(connection);
    this.outbox = new MongoOutboxStore(connection, [this.items], 'outbox');
  }

  async ensureIndexes(): Promise<void> {
    // Items stored before idempotency keys existed get their own id as the key (see the field).
    for await (const document of this.items
      .find({ idempotency_key: { $exists: false } }, { _id: 1 })
      .lean<{ _id: string }>()
      .cursor()) {
      await this.items.updateOne({ _id: document._id, idempotency_key: { $exists: false } }, { $set: { idempotency_key: document._id } });
    }
    await this.items.createIndexes();
    await this.blobIntents.ensureIndexes();
    await this.migrate();
  }

  /** Documents from before the review queue and search: their review state and their words. */
  private async migrate(): Promise<void> {
    await serialWrite(this.items, async () => {
      await this.items.collection.updateMany(
        { review_status: { $exists: false }, is_public: true },
        { $set: { review_status: 'reviewed' } },
      );
      await this.items.collection.updateMany({ review_status: { $exists: false } }, { $set: { review_status: 'new' } });
    });
    for (;;) {
      const batch = await this.items.collection
        .find({ search_terms: { $exists: false } }, { projection: { title: 1, notes: 1 } })
        .limit(500)
        .toArray();
      if (batch.length === 0) return;
      for (const document of batch) {
        await serialWrite(this.items, () =>
          this.items.collection.updateOne(
            { _id: document._id, search_terms: { $exists: false } },
            { $set: { search_terms: searchTermsOf({ title: String(document.title ?? ''), notes: String(document.notes ?? '') }) } },
          ),
        );
      }
    }
  }

  async create(record: EvidenceRecord, events: PendingEvent[], finishedUpload?: FinishedUpload, idempotencyKey?: string): Promise<void> {
    const { id, ...rest } = record;
    await this.items.collection.insertOne({
      _id: id,
      ...rest,
      search_terms: searchTermsOf(record),
      upload_id: finishedUpload?.uploadId ?? null,
      upload_size: finishedUpload?.size ?? null,
      idempotency_key: idempotencyKey === undefined ? id : keyOf(record.user_id, idempotencyKey),
      _outbox: toEmbedded(events),
      _outboxVersion: 0,
      _deleted: false,
    } as never);
  }

  async findById(id: string): Promise<EvidenceRecord | null> {
    return toRecord(await this.items.findOne({ _id: id, ...LIVE }).lean<EvidenceDocument>());
  }

  async update(
    id: string,
    changes: EvidenceChanges,
    events: PendingEvent[],
    facesGuard?: { facesVersion: number },
  ): Promise<EvidenceRecord | null> {
    // Documents from before faces were checked have no faces_version: version 0.
    const versioned = facesGuard
      ? facesGuard.facesVersion === 0
        ? { faces_version: { $in: [0, null] } }
        : { faces_version: facesGuard.facesVersion }
      : {};
    const write = (guard: Record<string, unknown>, set: Record<string, unknown>) =>
      this.items
        .findOneAndUpdate({ _id: id, ...LIVE, ...versioned, ...guard }, { $set: set, ...outboxPush(toEmbedded(events)) }, { new: true })
        .lean<EvidenceDocument>()
        .exec();
    const updated = await serialWrite(this.items, async () => {
      const { title, notes } = changes;
      if (title === undefined && notes === undefined) return write({}, { ...changes });
      if (title !== undefined && notes !== undefined) return write({}, { ...changes, search_terms: searchTermsOf({ title, notes }) });
      // The words come from both fields, so the one not changed is read and the write is guarded
      // by it: a concurrent change of that field (another request or replica, and no queue on a
      // server that needs none) makes the write miss, and it is tried again on fresh data.
      for (let attempt = 0; attempt < 10; attempt++) {
        const current = await this.items.findOne({ _id: id, ...LIVE }, { title: 1, notes: 1 }).lean<EvidenceDocument>();
        if (!current) return null;
        const guard = title === undefined ? { title: current.title ?? null } : { notes: current.notes ?? null };
        const words = searchTermsOf({ title: title ?? current.title ?? '', notes: notes ?? current.notes ?? '' });
        const written = await write(guard, { ...changes, search_terms: words });
        if (written) return written;
      }
      throw new Error(`could not update evidence ${id}: its title or notes kept changing`);
    });
    return toRecord(updated);
  }

  async delete(id: string, events: PendingEvent[]): Promise<EvidenceRecord | null> {
    const before = await serialWrite(this.items, () =>
      this.items
        .findOneAndUpdate({ _id: id, ...LIVE }, { $set: { _deleted: true, idempotency_key: id }, ...outboxPush(toEmbedded(events)) })
        .lean<EvidenceDocument>()
        .exec(),
    );
    return toRecord(before);
  }

  async list(filter: EvidenceFilter, limit: number, cursor?: string): Promise<EvidencePage> {
    const query: Record<string, unknown> = { ...LIVE };
    if (filter.ownerId) query.user_id = filter.ownerId;
    const and: Record<string, unknown>[] = [];
    if (filter.publicOnly) {
      query.is_public = true;
      query.media_status = { $in: ['ready', 'none'] };
      // Its public copy made (publicCopyOf): consent, or no blur pending.
      and.push({ $or: [{ faces_consent: true }, { public_blur: { $ne: 'pending' } }] });
    }
    if (filter.type) query.media_type = filter.type;
    if (filter.reviewStatus) query.review_status = filter.reviewStatus;
    if (filter.isPublic !== undefined) query.is_public = filter.isPublic;
    for (const word of filter.words ?? []) and.push({ search_terms: { $regex: `^${escapeRegex(word)}` } });
    const after = cursor ? decodeCursor(cursor) : null;
    if (after) and.push({ $or: [{ date_posted: { $lt: after[0] } }, { date_posted: after[0], _id: { $lt: after[1] } }] });
    if (and.length > 0) query.$and = and;
    const documents = await this.items
      .find(query)
      .sort({ date_posted: -1, _id: -1 })
      .limit(limit + 1)
      .lean<EvidenceDocument[]>();
    const items = documents.slice(0, limit).map((document) => toRecord(document)!);
    const last = items.at(-1);
    return { items, nextCursor: documents.length > limit && last ? encodeCursor([last.date_posted, last.id]) : null };
  }

  async setAllVisibility(isPublic: boolean, events: (changed: number) => PendingEvent[]): Promise<number> {
    const result = await serialWrite(this.items, async () => {
      const changed = await this.items
        .updateMany(
          { is_public: { $ne: isPublic }, ...LIVE },
          { $set: { is_public: isPublic, review_status: 'reviewed', updated_at: new Date().toISOString() } },
        )
        .exec();
      await this.items.updateMany({ review_status: { $ne: 'reviewed' }, ...LIVE }, { $set: { review_status: 'reviewed' } }).exec();
      return changed;
    });
    // Without multi-document transactions the bulk announcement is a separate write: if the
    // process died right here the change would stand unannounced (nothing consumes it today).
    if (result.modifiedCount > 0) await this.outbox.appendStandalone(events(result.modifiedCount));
    return result.modifiedCount;
  }

  async setVisibility(ids: string[], isPublic: boolean, eventsFor: (record: EvidenceRecord) => PendingEvent[]): Promise<SelectedChange> {
    const result: SelectedChange = { changed: [], unchanged: [], missing: [] };
    const updated_at = new Date().toISOString();
    for (const id of ids) {
      // One document, one atomic write with its event: the item is changed and announced, or neither.
      const changed = await serialWrite(this.items, () => this.setOneVisibility(id, isPublic, updated_at, eventsFor));
      if (changed === 'missing') result.missing.push(id);
      else if (changed === 'unchanged') result.unchanged.push(id);
      else result.changed.push(changed);
    }
    return result;
  }

  /**
   * The visibility of one item, written only if it is still what was read: a concurrent change
   * (another request or replica, no queue on this server) makes the write miss, and it is read
   * and decided again.
   */
  private async setOneVisibility(
    id: string,
    isPublic: boolean,
    updated_at: string,
    eventsFor: (record: EvidenceRecord) => PendingEvent[],
  ): Promise<EvidenceRecord | 'missing' | 'unchanged'> {
    for (let attempt = 0; attempt < 10; attempt++) {
      const current = await this.items.findOne({ _id: id, ...LIVE }).lean<EvidenceDocument>();
      if (!current) return 'missing';
      if (current.is_public === isPublic) return 'unchanged';
      const after = { ...toRecord(current)!, is_public: isPublic, review_status: 'reviewed' as const, updated_at };
      const written = await this.items
        .findOneAndUpdate(
          { _id: id, ...LIVE, is_public: current.is_public },
          { $set: { is_public: isPublic, review_status: 'reviewed', updated_at }, ...outboxPush(toEmbedded(eventsFor(after))) },
          { new: true },
        )
        .lean<EvidenceDocument>()
        .exec();
      if (written) return toRecord(written)!;
    }
    throw new Error(`could not change the visibility of evidence ${id}: it kept changing`);
  }

  async markReviewed(ids: string[], eventsFor: (record: EvidenceRecord) => PendingEvent[]): Promise<SelectedChange> {
    const result: SelectedChange = { changed: [], unchanged: [], missing: [] };
    for (const id of ids) {
      const outcome = await serialWrite(this.items, async () => {
        const current = toRecord(await this.items.findOne({ _id: id, ...LIVE }).lean<EvidenceDocument>());
        if (!current) return 'missing' as const;
        if (current.review_status === 'reviewed') return 'unchanged' as const;
        const after = { ...current, review_status: 'reviewed' as const };
        const written = await this.items
          .findOneAndUpdate(
            { _id: id, ...LIVE, review_status: { $ne: 'reviewed' } },
            { $set: { review_status: 'reviewed' }, ...outboxPush(toEmbedded(eventsFor(after))) },
            { new: true },
          )
          .lean<EvidenceDocument>()
          .exec();
        return toRecord(written) ?? ('unchanged' as const);
      });
      if (outcome === 'missing') result.missing.push(id);
      else if (outcome === 'unchanged') result.unchanged.push(id);
      else result.changed.push(outcome);
    }
    return result;
  }

  async counts(): Promise<EvidenceCounts> {
    const [total, open, waiting] = await Promise.all([
      this.items.countDocuments({ ...LIVE }).exec(),
      this.items.countDocuments({ ...LIVE, is_public: true }).exec(),
      this.items.countDocuments({ ...LIVE, review_status: 'new' }).exec(),
    ]);
    return { new: waiting, public: open, private: total - open, total };
  }

  async applyMediaResult(
    id: string,
    revision: number,
    changes: EvidenceChanges,
    onlyIfDisplayIn?: (string | null)[],
    onlyIfFacesVersion?: number,
  ): Promise<EvidenceRecord | null> {
    const display = onlyIfDisplayIn ? { display_key: { $in: onlyIfDisplayIn } } : {};
    const faces =
      onlyIfFacesVersion === undefined ? {} : { faces_version: onlyIfFacesVersion === 0 ? { $in: [0, null] } : onlyIfFacesVersion };
    const updated = await serialWrite(this.items, () =>
      this.items
        .findOneAndUpdate({ _id: id, media_revision: revision, ...LIVE, ...display, ...faces }, { $set: changes }, { new: true })
        .lean<EvidenceDocument>()
        .exec(),
    );
    return toRecord(updated);
  }

  async updateAuthor(userId: string, username: string, avatarUrl: string | null): Promise<number> {
    const result = await serialWrite(this.items, () =>
      this.items
        .updateMany(
          { user_id: userId, ...LIVE, $or: [{ username: { $ne: username } }, { avatar_url: { $ne: avatarUrl } }] },
          { $set: { username, avatar_url: avatarUrl } },
        )
        .exec(),
    );
    return result.modifiedCount;
  }

  async deleteByOwner(userId: string, events: (records: EvidenceRecord[]) => PendingEvent[]): Promise<EvidenceRecord[]> {
    const documents = await this.items.find({ user_id: userId, ...LIVE }).lean<EvidenceDocument[]>();
    const deleted: EvidenceRecord[] = [];
    for (const document of documents) {
      const record = toRecord(document)!;
      // Each item is tombstoned with its own event: one atomic write per item.
      const gone = await this.delete(record.id, events([record]));
      if (gone) deleted.push(gone);
    }
    return deleted;
  }

  async findProcessing(limit: number): Promise<EvidenceRecord[]> {
    const documents = await this.items
      .find({ media_status: 'processing', ...LIVE })
      .sort({ updated_at: 1 })
      .limit(limit)
      .lean<EvidenceDocument[]>();
    return documents.map((document) => toRecord(document)!);
  }

  async findBlurPending(limit: number): Promise<EvidenceRecord[]> {
    const documents = await this.items
      .find({ public_blur: 'pending', face_check: { $in: ['done', 'off'] }, ...LIVE })
      .sort({ updated_at: 1 })
      .limit(limit)
      .lean<EvidenceDocument[]>();
    return documents.map((document) => toRecord(document)!);
  }

  async holdUncheckedPictures(events: (held: number) => PendingEvent[]): Promise<number> {
    // Documents from before faces were checked may have neither field (null matches a missing one).
    const result = await serialWrite(this.items, () =>
      this.items
        .updateMany(
          { face_check: null, media_type: { $in: [MEDIA_TYPES.image, MEDIA_TYPES.video] }, public_blur: { $in: ['none', null] }, ...LIVE },
          { $set: { public_blur: 'pending' } },
        )
        .exec(),
    );
    // As setAllVisibility's: without multi-document transactions the announcement is a write of its own.
    if (result.modifiedCount > 0) await this.outbox.appendStandalone(events(result.modifiedCount));
    return result.modifiedCount;
  }

  async findUncheckedPictures(mediaType: MediaType, limit: number): Promise<EvidenceRecord[]> {
    const documents = await this.items
      .find({ face_check: null, media_type: mediaType, media_status: 'ready', ...LIVE })
      .sort({ date_posted: 1, _id: 1 })
      .limit(limit)
      .lean<EvidenceDocument[]>();
    return documents.map((document) => toRecord(document)!);
  }

  async countUncheckedPictures(mediaType: MediaType): Promise<number> {
    return this.items.countDocuments({ face_check: null, media_type: mediaType, ...LIVE }).exec();
  }

  async findFinishedUpload(uploadId: string): Promise<FinishedUpload | null> {
    const document = await this.items.findOne({ upload_id: uploadId, ...LIVE }, { upload_id: 1, upload_size: 1 }).lean<EvidenceDocument>();
    return document ? { uploadId, evidenceId: document._id, size: document.upload_size ?? 0 } : null;
  }

  async findByIdempotencyKey(userId: string, key: string): Promise<EvidenceRecord | null> {
    return toRecord(await this.items.findOne({ idempotency_key: keyOf(userId, key), ...LIVE }).lean<EvidenceDocument>());
  }

  async appendEvents(events: PendingEvent[]): Promise<void> {
    await this.outbox.appendStandalone(events);
  }

  async ping(): Promise<void> {
    await this.connection.db!.admin().ping();
  }
}

/** The author directory in MongoDB. */
export class MongoAuthorDirectory {
  private readonly authors: Model<AuthorDocument>;

  constructor(connection: Connection) {
    this.authors = connection.model<AuthorDocument>(
      'Author',
      new Schema<AuthorDocument>({ _id: String, username: String, avatar_url: { type: String, default: null } }, { versionKey: false }),
      'authors',
    );
  }

  async find(userId: string) {
    const document = await this.authors.findById(userId).lean<AuthorDocument>();
    return document ? { userId: document._id, username: document.username, avatarUrl: document.avatar_url } : null;
  }

  async upsert(author: { userId: string; username: string; avatarUrl: string | null }): Promise<void> {
    await this.authors.updateOne(
      { _id: author.userId },
      { $set: { username: author.username, avatar_url: author.avatarUrl } },
      { upsert: true },
    );
  }

  async remove(userId: string): Promise<void> {
    await this.authors.deleteOne({ _id: userId });
  }
}
