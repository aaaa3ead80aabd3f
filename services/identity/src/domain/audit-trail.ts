import { csvLine, type AuditEntry, type AuditFilter, type AuditRecordedData, type EventEnvelope } from '@portal/contracts';
import type { Logger } from '@portal/platform';
import type { AuditLogStore, AuditPage, AuditStoreFilter, StoredAuditEntry } from '../repositories/audit-log-store.js';
import type { UserRepository } from '../repositories/user-repository.js';

export interface AuditTrailDeps {
  store: AuditLogStore;
  users: Pick<UserRepository, 'findById'>;
  logger: Logger;
}

export const AUDIT_CSV_COLUMNS = [
  'at',
  'actor_username',
  'actor_id',
  'action',
  'target_type',
  'target_id',
  'target_label',
  'before',
  'after',
  'details',
  'erased',
] as const;

/**
 * The audit log: stores the acts services announce on `audit.entries` and answers administrators'
 * questions about them. An entry about (or by) someone whose account is gone is stored without
 * what identifies them, whichever of the deletion and the entry arrives first.
 */
export class AuditTrail {
  constructor(private readonly deps: AuditTrailDeps) {}

  async record(event: EventEnvelope<AuditRecordedData>): Promise<void> {
    const { data } = event;
    const subject = data.subjectUserId ?? (data.target.type === 'user' ? data.target.id : null);
    const entry: StoredAuditEntry = {
      id: event.id,
      at: new Date(event.occurredAt).toISOString(),
      actor_id: data.actor.id,
      actor_username: data.actor.username,
      action: data.action,
      target_type: data.target.type,
      target_id: data.target.id,
      target_label: data.target.label,
      subject_user_id: subject,
      before: data.before,
      after: data.after,
      details: data.details,
      erased: false,
    };
    const people = [subject, data.actor.id].filter((id): id is string => id !== null);
    const gone = await this.deletedAmong(people);
    await this.deps.store.append(gone.length > 0 ? erasedCopy(entry, gone) : entry);
    // Deleted while the entry was being stored: the deletion's erasure may have run before it.
    for (const id of await this.deletedAmong(people)) if (!gone.includes(id)) await this.deps.store.erasePerson(id);
  }

  async erasePerson(userId: string): Promise<void> {
    const changed = await this.deps.store.erasePerson(userId);
    if (changed > 0) this.deps.logger.info({ userId, entries: changed }, "removed a deleted account's identifiers from the audit log");
  }

  list(filter: AuditFilter, limit: number, cursor?: string): Promise<AuditPage> {
    return this.deps.store.list(normalise(filter), limit, cursor);
  }

  /**
   * Every entry matching the filter as CSV, a page at a time: the first chunk is the header and
   * the first page (read before anything is sent, so a store outage is still a clean error).
   */
  async *csv(filter: AuditFilter): AsyncGenerator<string> {
    const toLines = (page: AuditPage) =>
      page.items.map((entry) => csvLine(AUDIT_CSV_COLUMNS.map((column) => csvValue(entry, column)))).join('');
    let page = await this.deps.store.list(normalise(filter), 500);
    yield csvLine(AUDIT_CSV_COLUMNS) + toLines(page);
    while (page.nextCursor) {
      page = await this.deps.store.list(normalise(filter), 500, page.nextCursor);
      yield toLines(page);
    }
  }

  private async deletedAmong(ids: string[]): Promise<string[]> {
    const gone: string[] = [];
    for (const id of new Set(ids)) if (!(await this.deps.users.findById(id))) gone.push(id);
    return gone;
  }
}

function normalise(filter: AuditFilter): AuditStoreFilter {
  const { from, to, ...rest } = filter;
  return {
    ...rest,
    ...(from ? { from: new Date(from).toISOString() } : {}),
    ...(to ? { to: new Date(to).toISOString() } : {}),
  };
}

function erasedCopy(entry: StoredAuditEntry, gone: string[]): StoredAuditEntry {
  const copy: StoredAuditEntry = { ...entry, erased: true };
  if (entry.subject_user_id && gone.includes(entry.subject_user_id)) {
    Object.assign(copy, { subject_user_id: null, target_label: null, before: null, after: null, details: null });
    if (entry.target_type === 'user' && entry.target_id === entry.subject_user_id) copy.target_id = null;
  }
  if (entry.actor_id && gone.includes(entry.actor_id)) Object.assign(copy, { actor_id: null, actor_username: null });
  return copy;
}

function csvValue(entry: AuditEntry, column: (typeof AUDIT_CSV_COLUMNS)[number]): string | boolean | null {
  const value = entry[column];
  if (value !== null && typeof value === 'object') return JSON.stringify(value);
  return value;
}
