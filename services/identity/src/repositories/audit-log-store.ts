import type { AuditEntry, AuditFilter } from '@portal/contracts';

/** An entry as stored: with the participant it concerns, for erasure (never served). */
export interface StoredAuditEntry extends AuditEntry {
  subject_user_id: string | null;
}

/** Filters with times already normalised to ISO 8601 UTC (comparable as strings). */
export type AuditStoreFilter = Omit<AuditFilter, 'from' | 'to'> & { from?: string; to?: string };

export interface AuditPage {
  items: AuditEntry[];
  nextCursor: string | null;
}

/**
 * The audit log port. Append-only: an entry is never deleted or edited, except that erasing a
 * participant removes what identifies them from the entries by or about them. Lists are newest
 * first, a page at a time (keyset cursors).
 */
export interface AuditLogStore {
  /** Stores an entry; one whose id is stored already is ignored (events come at least once). */
  append(entry: StoredAuditEntry): Promise<void>;
  list(filter: AuditStoreFilter, limit: number, cursor?: string): Promise<AuditPage>;
  /**
   * The participant's identifiers go from every entry by them (actor) or about them (subject, or
   * the account targeted): labels, before/after, details; the entries stay, marked erased.
   * Answers how many entries changed.
   */
  erasePerson(userId: string): Promise<number>;
  ping(): Promise<void>;
}
