import type { AuditEntry } from '@portal/contracts';
import { decodeCursor, encodeCursor, type SqliteDatabase } from '@portal/platform';
import type { AuditLogStore, AuditPage, AuditStoreFilter, StoredAuditEntry } from '../audit-log-store.js';

interface AuditRow {
  id: string;
  at: string;
  actor_id: string | null;
  actor_username: string | null;
  action: AuditEntry['action'];
  target_type: AuditEntry['target_type'];
  target_id: string | null;
  target_label: string | null;
  subject_user_id: string | null;
  before_json: string | null;
  after_json: string | null;
  details_json: string | null;
  erased: number;
}

/** The audit log in identity.sqlite (table audit_entries; triggers keep it append-only). */
export class SqliteAuditLog implements AuditLogStore {
  constructor(private readonly db: SqliteDatabase) {}

  async append(entry: StoredAuditEntry): Promise<void> {
    this.db
      .prepare(
        `INSERT INTO audit_entries (id, at, actor_id, actor_username, action, target_type, target_id, target_label,
           subject_user_id, before_json, after_json, details_json, erased)
         VALUES (@id, @at, @actor_id, @actor_username, @action, @target_type, @target_id, @target_label,
           @subject_user_id, @before_json, @after_json, @details_json, @erased)
         ON CONFLICT (id) DO NOTHING`,
      )
      .run({
        id: entry.id,
        at: entry.at,
        actor_id: entry.actor_id,
        actor_username: entry.actor_username,
        action: entry.action,
        target_type: entry.target_type,
        target_id: entry.target_id,
        target_label: entry.target_label,
        subject_user_id: entry.subject_user_id,
        before_json: json(entry.before),
        after_json: json(entry.after),
        details_json: json(entry.details),
        erased: entry.erased ? 1 : 0,
      });
  }

  async list(filter: AuditStoreFilter, limit: number, cursor?: string): Promise<AuditPage> {
    const where: string[] = [];
    const params: Record<string, unknown> = { limit: limit + 1 };
    if (filter.actor) {
      where.push('(actor_id = @actor OR actor_username = @actor COLLATE NOCASE)');
      params.actor = filter.actor;
    }
    if (filter.action) {
      where.push('action = @action');
      params.action = filter.action;
    }
    if (filter.target) {
      where.push('target_id = @target');
      params.target = filter.target;
    }
    if (filter.from) {
      where.push('at >= @from');
      params.from = filter.from;
    }
    if (filter.to) {
      where.push('at <= @to');
      params.to = filter.to;
    }
    const after = cursor ? decodeCursor(cursor) : null;
    if (cursor && !after) return { items: [], nextCursor: null };
    if (after) {
      where.push('(at, id) < (@cursorAt, @cursorId)');
      params.cursorAt = after[0];
      params.cursorId = after[1];
    }
    const rows = this.db
      .prepare(
        `SELECT * FROM audit_entries ${where.length > 0 ? `WHERE ${where.join(' AND ')}` : ''} ORDER BY at DESC, id DESC LIMIT @limit`,
      )
      .all(params) as AuditRow[];
    const items = rows.slice(0, limit).map(fromRow);
    const last = items.at(-1);
    return { items, nextCursor: rows.length > limit && last ? encodeCursor([last.at, last.id]) : null };
  }

  async erasePerson(userId: string): Promise<number> {
    return this.db.transaction(() => {
      const asSubject = this.db
        .prepare(
          `UPDATE audit_entries SET subject_user_id = NULL, target_label = NULL, before_json = NULL, after_json = NULL,
             details_json = NULL, target_id = CASE WHEN target_type = 'user' AND target_id = @id THEN NULL ELSE target_id END,
             erased = 1
           WHERE subject_user_id = @id OR (target_type = 'user' AND target_id = @id)`,
        )
        .run({ id: userId }).changes;
      const asActor = this.db
        .prepare('UPDATE audit_entries SET actor_id = NULL, actor_username = NULL, erased = 1 WHERE actor_id = @id')
        .run({ id: userId }).changes;
      return asSubject + asActor;
    })();
  }

  async ping(): Promise<void> {
    this.db.prepare('SELECT 1').get();
  }
}

function json(value: Record<string, unknown> | null): string | null {
  return value === null ? null : JSON.stringify(value);
}

function parse(value: string | null): Record<string, unknown> | null {
  return value === null ? null : (JSON.parse(value) as Record<string, unknown>);
}

function fromRow(row: AuditRow): AuditEntry {
  return {
    id: row.id,
    at: row.at,
    actor_id: row.actor_id,
    actor_username: row.actor_username,
    action: row.action,
    target_type: row.target_type,
    target_id: row.target_id,
    target_label: row.target_label,
    before: parse(row.before_json),
    after: parse(row.after_json),
    details: parse(row.details_json),
    erased: row.erased === 1,
  };
}
