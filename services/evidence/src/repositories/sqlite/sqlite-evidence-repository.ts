import { appendToOutbox, decodeCursor, encodeCursor, SqliteBlobIntents, SqliteOutboxStore, type SqliteDatabase } from '@portal/platform';
import { MEDIA_TYPES, type EvidenceCounts, type MediaType } from '@portal/contracts';
import type { EvidenceChanges, EvidenceRecord } from '../../domain/evidence-record.js';
import type {
  EvidenceFilter,
  EvidencePage,
  EvidenceRepository,
  FinishedUpload,
  PendingEvent,
  SelectedChange,
} from '../evidence-repository.js';

type Row = Omit<EvidenceRecord, 'is_public' | 'media_type' | 'faces_consent'> & {
  is_public: number;
  media_type: number;
  faces_consent: number;
};

const WRITABLE = [
  'username',
  'avatar_url',
  'title',
  'notes',
  'location',
  'media_type',
  'is_public',
  'review_status',
  'updated_at',
  'media_status',
  'media_error',
  'media_revision',
  'original_key',
  'original_type',
  'original_size',
  'display_key',
  'display_type',
  'thumb_key',
  'poster_key',
  'placeholder',
  'width',
  'height',
  'duration',
  'face_check',
  'face_count',
  'faces_key',
  'faces_version',
  'faces_consent',
  'public_blur',
  'public_display_key',
  'public_thumb_key',
  'public_poster_key',
  'public_placeholder',
] as const;

export class SqliteEvidenceRepository implements EvidenceRepository {
  readonly outbox: SqliteOutboxStore;
  readonly blobIntents: SqliteBlobIntents;

  constructor(private readonly db: SqliteDatabase) {
    this.outbox = new SqliteOutboxStore(db);
    this.blobIntents = new SqliteBlobIntents(db);
  }

  async create(record: EvidenceRecord, events: PendingEvent[], finishedUpload?: FinishedUpload, idempotencyKey?: string): Promise<void> {
    this.db
      .transaction(() => {
        const columns = ['id', 'user_id', 'date_posted', ...WRITABLE];
        this.db
          .prepare(`INSERT INTO evidence (${columns.join(', ')}) VALUES (${columns.map((column) => `@${column}`).join(', ')})`)
          .run(toRow(record));
        if (finishedUpload) {
          this.db
            .prepare('INSERT INTO finished_uploads (upload_id, evidence_id, size) VALUES (?, ?, ?)')
            .run(finishedUpload.uploadId, finishedUpload.evidenceId, finishedUpload.size);
        }
        if (idempotencyKey !== undefined) {
          this.db
            .prepare('INSERT INTO idempotency_keys (user_id, key, evidence_id) VALUES (?, ?, ?)')
            .run(record.user_id, idempotencyKey, record.id);
        }
        this.append(events);
      })
      .immediate();
  }

  async findById(id: string): Promise<EvidenceRecord | null> {
    return fromRow(this.db.prepare('SELECT * FROM evidence WHERE id = ?').get(id) as Row | undefined);
  }

  async update(
    id: string,
    changes: EvidenceChanges,
    events: PendingEvent[],
    guard?: { facesVersion: number },
  ): Promise<EvidenceRecord | null> {
    return this.db
      .transaction(() => {
        if (guard) {
          const current = this.db.prepare('SELECT faces_version FROM evidence WHERE id = ?').get(id) as
            { faces_version: number } | undefined;
          if (current?.faces_version !== guard.facesVersion) return null;
        }
        if (!this.updateRow(id, changes)) return null;
        this.append(events);
        return fromRow(this.db.prepare('SELECT * FROM evidence WHERE id = ?').get(id) as Row);
      })
      .immediate();
  }

  async delete(id: string, events: PendingEvent[]): Promise<EvidenceRecord | null> {
    return this.db
      .transaction(() => {
        const record = fromRow(this.db.prepare('SELECT * FROM evidence WHERE id = ?').get(id) as Row | undefined);
        if (!record) return null;
        this.db.prepare('DELETE FROM evidence WHERE id = ?').run(id);
        this.append(events);
        return record;
      })
      .immediate();
  }

  async list(filter: EvidenceFilter, limit: number, cursor?: string): Promise<EvidencePage> {
    const where: string[] = [];
    const params: unknown[] = [];
    if (filter.ownerId) {
      where.push('user_id = ?');
      params.push(filter.ownerId);
    }
    // Published, processed, and its public copy made (publicCopyOf): consent, or no blur pending.
    if (filter.publicOnly)
      where.push(`is_public = 1 AND media_status IN ('ready', 'none') AND (faces_consent = 1 OR public_blur <> 'pending')`);
    if (filter.type) {
      where.push('media_type = ?');
      params.push(filter.type);
    }
    if (filter.reviewStatus) {
      where.push('review_status = ?');
      params.push(filter.reviewStatus);
    }
    if (filter.isPublic !== undefined) {
      where.push('is_public = ?');
      params.push(filter.isPublic ? 1 : 0);
    }
    if (filter.words && filter.words.length > 0) {
      // Each word a quoted prefix query: the words hold letters and digits only (searchWords).
      where.push(
        `id IN (SELECT d.evidence_id FROM evidence_search s JOIN evidence_search_docs d ON d.doc = s.rowid WHERE evidence_search MATCH ?)`,
      );
      params.push(filter.words.map((word) => `"${word.replaceAll('"', '""')}"*`).join(' AND '));
    }
    const after = cursor ? decodeCursor(cursor) : null;
    if (after) {
      where.push('(date_posted, id) < (?, ?)');
      params.push(after[0], after[1]);
    }
    const rows = this.db
      .prepare(`SELECT * FROM evidence ${where.length ? `WHERE ${where.join(' AND ')}` : ''} ORDER BY date_posted DESC, id DESC LIMIT ?`)
      .all(...params, limit + 1) as Row[];
    const items = rows.slice(0, limit).map((row) => fromRow(row)!);
    const last = items.at(-1);
    return { items, nextCursor: rows.length > limit && last ? encodeCursor([last.date_posted, last.id]) : null };
  }

  async setAllVisibility(isPublic: boolean, events: (changed: number) => PendingEvent[]): Promise<number> {
    return this.db
      .transaction(() => {
        const now = new Date().toISOString();
        const changed = this.db
          .prepare(`UPDATE evidence SET is_public = ?, review_status = 'reviewed', updated_at = ? WHERE is_public <> ?`)
          .run(isPublic ? 1 : 0, now, isPublic ? 1 : 0).changes;
        this.db.prepare(`UPDATE evidence SET review_status = 'reviewed' WHERE review_status <> 'reviewed'`).run();
        if (changed > 0) this.append(events(changed));
        return changed;
      })
      .immediate();
  }

  async setVisibility(ids: string[], isPublic: boolean, eventsFor: (record: EvidenceRecord) => PendingEvent[]): Promise<SelectedChange> {
    // One transaction for the call: each item is still all or nothing, and 500 items cost one commit.
    return this.db
      .transaction(() => {
        const result: SelectedChange = { changed: [], unchanged: [], missing: [] };
        const now = new Date().toISOString();
        for (const id of ids) {
          const row = this.db.prepare('SELECT * FROM evidence WHERE id = ?').get(id) as Row | undefined;
          if (!row) {
            result.missing.push(id);
          } else if ((row.is_public === 1) === isPublic) {
            result.unchanged.push(id);
          } else {
            this.updateRow(id, { is_public: isPublic, review_status: 'reviewed', updated_at: now });
            const record = fromRow(this.db.prepare('SELECT * FROM evidence WHERE id = ?').get(id) as Row)!;
            this.append(eventsFor(record));
            result.changed.push(record);
          }
        }
        return result;
      })
      .immediate();
  }

  async markReviewed(ids: string[], eventsFor: (record: EvidenceRecord) => PendingEvent[]): Promise<SelectedChange> {
    return this.db
      .transaction(() => {
        const result: SelectedChange = { changed: [], unchanged: [], missing: [] };
        for (const id of ids) {
          const row = this.db.prepare('SELECT review_status FROM evidence WHERE id = ?').get(id) as { review_status: string } | undefined;
          if (!row) {
            result.missing.push(id);
          } else if (row.review_status === 'reviewed') {
            result.unchanged.push(id);
          } else {
            this.db.prepare(`UPDATE evidence SET review_status = 'reviewed' WHERE id = ?`).run(id);
            const record = fromRow(this.db.prepare('SELECT * FROM evidence WHERE id = ?').get(id) as Row)!;
            this.append(eventsFor(record));
            result.changed.push(record);
          }
        }
        return result;
      })
      .immediate();
  }

  async counts(): Promise<EvidenceCounts> {
    const row = this.db
      .prepare(
        `SELECT count(*) AS total, coalesce(sum(is_public), 0) AS public, coalesce(sum(review_status = 'new'), 0) AS new FROM evidence`,
      )
      .get() as { total: number; public: number; new: number };
    return { new: row.new, public: row.public, private: row.total - row.public, total: row.total };
  }

  async applyMediaResult(
    id: string,
    revision: number,
    changes: EvidenceChanges,
    onlyIfDisplayIn?: (string | null)[],
    onlyIfFacesVersion?: number,
  ): Promise<EvidenceRecord | null> {
    return this.db
      .transaction(() => {
        const current = this.db.prepare('SELECT media_revision, display_key, faces_version FROM evidence WHERE id = ?').get(id) as
          { media_revision: number; display_key: string | null; faces_version: number } | undefined;
        if (!current || current.media_revision !== revision) return null;
        if (onlyIfDisplayIn && !onlyIfDisplayIn.includes(current.display_key)) return null;
        if (onlyIfFacesVersion !== undefined && current.faces_version !== onlyIfFacesVersion) return null;
        this.updateRow(id, changes);
        return fromRow(this.db.prepare('SELECT * FROM evidence WHERE id = ?').get(id) as Row);
      })
      .immediate();
  }

  async updateAuthor(userId: string, username: string, avatarUrl: string | null): Promise<number> {
    return this.db
      .prepare('UPDATE evidence SET username = ?, avatar_url = ? WHERE user_id = ? AND (username <> ? OR avatar_url IS NOT ?)')
      .run(username, avatarUrl, userId, username, avatarUrl).changes;
  }

  async deleteByOwner(userId: string, events: (records: EvidenceRecord[]) => PendingEvent[]): Promise<EvidenceRecord[]> {
    return this.db
      .transaction(() => {
        const records = (this.db.prepare('SELECT * FROM evidence WHERE user_id = ?').all(userId) as Row[]).map((row) => fromRow(row)!);
        if (records.length === 0) return [];
        this.db.prepare('DELETE FROM evidence WHERE user_id = ?').run(userId);
        this.append(events(records));
        return records;
      })
      .immediate();
  }

  async findProcessing(limit: number): Promise<EvidenceRecord[]> {
    return (
      this.db.prepare(`SELECT * FROM evidence WHERE media_status = 'processing' ORDER BY updated_at LIMIT ?`).all(limit) as Row[]
    ).map((row) => fromRow(row)!);
  }

  async findBlurPending(limit: number): Promise<EvidenceRecord[]> {
    return (
      this.db
        .prepare(`SELECT * FROM evidence WHERE public_blur = 'pending' AND face_check IN ('done', 'off') ORDER BY updated_at LIMIT ?`)
        .all(limit) as Row[]
    ).map((row) => fromRow(row)!);
  }

  async holdUncheckedPictures(events: (held: number) => PendingEvent[]): Promise<number> {
    return this.db
      .transaction(() => {
        const held = this.db
          .prepare(`UPDATE evidence SET public_blur = 'pending' WHERE face_check IS NULL AND media_type IN (?, ?) AND public_blur = 'none'`)
          .run(MEDIA_TYPES.image, MEDIA_TYPES.video).changes;
        if (held > 0) this.append(events(held));
        return held;
      })
      .immediate();
  }

  async findUncheckedPictures(mediaType: MediaType, limit: number): Promise<EvidenceRecord[]> {
    return (
      this.db
        .prepare(
          `SELECT * FROM evidence WHERE face_check IS NULL AND media_type = ? AND media_status = 'ready' ORDER BY date_posted, id LIMIT ?`,
        )
        .all(mediaType, limit) as Row[]
    ).map((row) => fromRow(row)!);
  }

  async countUncheckedPictures(mediaType: MediaType): Promise<number> {
    return (
      this.db.prepare(`SELECT COUNT(*) AS n FROM evidence WHERE face_check IS NULL AND media_type = ?`).get(mediaType) as { n: number }
    ).n;
  }

  async findFinishedUpload(uploadId: string): Promise<FinishedUpload | null> {
    const row = this.db.prepare('SELECT upload_id, evidence_id, size FROM finished_uploads WHERE upload_id = ?').get(uploadId) as
      { upload_id: string; evidence_id: string; size: number } | undefined;
    return row ? { uploadId: row.upload_id, evidenceId: row.evidence_id, size: row.size } : null;
  }

  async findByIdempotencyKey(userId: string, key: string): Promise<EvidenceRecord | null> {
    return fromRow(
      this.db
        .prepare(
          'SELECT evidence.* FROM idempotency_keys JOIN evidence ON evidence.id = idempotency_keys.evidence_id WHERE idempotency_keys.user_id = ? AND idempotency_keys.key = ?',
        )
        .get(userId, key) as Row | undefined,
    );
  }

  async appendEvents(events: PendingEvent[]): Promise<void> {
    this.db.transaction(() => this.append(events)).immediate();
  }

  async ping(): Promise<void> {
    this.db.prepare('SELECT 1').get();
  }

  private updateRow(id: string, changes: EvidenceChanges): boolean {
    const columns = WRITABLE.filter((column) => column in changes);
    if (columns.length === 0) return this.db.prepare('SELECT 1 FROM evidence WHERE id = ?').get(id) !== undefined;
    return (
      this.db
        .prepare(`UPDATE evidence SET ${columns.map((column) => `${column} = @${column}`).join(', ')} WHERE id = @id`)
        .run({ ...toRow(changes), id }).changes > 0
    );
  }

  private append(events: PendingEvent[]): void {
    for (const { topic, event } of events) appendToOutbox(this.db, topic, event);
  }
}

function toRow(record: EvidenceChanges & Partial<Pick<EvidenceRecord, 'id' | 'user_id' | 'date_posted'>>): Record<string, unknown> {
  const row: Record<string, unknown> = { ...record };
  if (record.is_public !== undefined) row.is_public = record.is_public ? 1 : 0;
  if (record.faces_consent !== undefined) row.faces_consent = record.faces_consent ? 1 : 0;
  return row;
}

function fromRow(row: Row | undefined): EvidenceRecord | null {
  if (!row) return null;
  return { ...row, is_public: row.is_public === 1, faces_consent: row.faces_consent === 1, media_type: row.media_type as MediaType };
}
