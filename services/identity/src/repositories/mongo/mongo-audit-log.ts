import { Schema, type Connection, type Model } from 'mongoose';
import type { AuditEntry } from '@portal/contracts';
import { decodeCursor, encodeCursor, isDuplicateKeyError, serialWrite } from '@portal/platform';
import type { AuditLogStore, AuditPage, AuditStoreFilter, StoredAuditEntry } from '../audit-log-store.js';

interface AuditDocument extends Omit<StoredAuditEntry, 'id'> {
  _id: string;
  /** Lower-case copy of actor_username, for the actor filter regardless of case. */
  actor_key: string | null;
}

const auditSchema = new Schema<AuditDocument>(
  {
    _id: String,
    at: { type: String, required: true },
    actor_id: { type: String, default: null },
    actor_username: { type: String, default: null },
    actor_key: { type: String, default: null },
    action: { type: String, required: true },
    target_type: { type: String, required: true },
    target_id: { type: String, default: null },
    target_label: { type: String, default: null },
    subject_user_id: { type: String, default: null },
    before: { type: Schema.Types.Mixed, default: null },
    after: { type: Schema.Types.Mixed, default: null },
    details: { type: Schema.Types.Mixed, default: null },
    erased: { type: Boolean, default: false },
  },
  { versionKey: false, minimize: false },
);
auditSchema.index({ at: -1, _id: -1 }, { name: 'by_time' });
auditSchema.index({ actor_id: 1 }, { name: 'by_actor' });
auditSchema.index({ target_id: 1 }, { name: 'by_target' });
auditSchema.index({ subject_user_id: 1 }, { name: 'by_subject' });

/** The audit log in identity's MongoDB database (collection audit_entries), insert-only but for erasures. */
export class MongoAuditLog implements AuditLogStore {
  private readonly entries: Model<AuditDocument>;

  constructor(private readonly connection: Connection) {
    this.entries = connection.model<AuditDocument>('AuditEntry', auditSchema, 'audit_entries');
  }

  async ensureIndexes(): Promise<void> {
    await this.entries.createIndexes();
  }

  async append(entry: StoredAuditEntry): Promise<void> {
    const { id, ...rest } = entry;
    await this.entries.create({ _id: id, ...rest, actor_key: entry.actor_username?.toLowerCase() ?? null }).catch((error: unknown) => {
      if (!isDuplicateKeyError(error)) throw error;
    });
  }

  async list(filter: AuditStoreFilter, limit: number, cursor?: string): Promise<AuditPage> {
    const and: Record<string, unknown>[] = [];
    if (filter.actor) and.push({ $or: [{ actor_id: filter.actor }, { actor_key: filter.actor.toLowerCase() }] });
    if (filter.action) and.push({ action: filter.action });
    if (filter.target) and.push({ target_id: filter.target });
    if (filter.from) and.push({ at: { $gte: filter.from } });
    if (filter.to) and.push({ at: { $lte: filter.to } });
    const after = cursor ? decodeCursor(cursor) : null;
    if (cursor && !after) return { items: [], nextCursor: null };
    if (after) and.push({ $or: [{ at: { $lt: after[0] } }, { at: after[0], _id: { $lt: after[1] } }] });
    const documents = await this.entries
      .find(and.length > 0 ? { $and: and } : {})
      .sort({ at: -1, _id: -1 })
      .limit(limit + 1)
      .lean<AuditDocument[]>();
    const items = documents.slice(0, limit).map(toEntry);
    const last = items.at(-1);
    return { items, nextCursor: documents.length > limit && last ? encodeCursor([last.at, last.id]) : null };
  }

  async erasePerson(userId: string): Promise<number> {
    return serialWrite(this.entries, async () => {
      // An account targeted is the entry's subject too: both go in the next step.
      await this.entries.updateMany({ target_type: 'user', target_id: userId }, { $set: { target_id: null, subject_user_id: userId } });
      const asSubject = await this.entries.updateMany(
        { subject_user_id: userId },
        { $set: { subject_user_id: null, target_label: null, before: null, after: null, details: null, erased: true } },
      );
      const asActor = await this.entries.updateMany(
        { actor_id: userId },
        { $set: { actor_id: null, actor_username: null, actor_key: null, erased: true } },
      );
      return asSubject.modifiedCount + asActor.modifiedCount;
    });
  }

  async ping(): Promise<void> {
    await this.connection.db!.admin().ping();
  }
}

function toEntry(document: AuditDocument): AuditEntry {
  return {
    id: document._id,
    at: document.at,
    actor_id: document.actor_id ?? null,
    actor_username: document.actor_username ?? null,
    action: document.action,
    target_type: document.target_type,
    target_id: document.target_id ?? null,
    target_label: document.target_label ?? null,
    before: document.before ?? null,
    after: document.after ?? null,
    details: document.details ?? null,
    erased: document.erased === true,
  };
}
