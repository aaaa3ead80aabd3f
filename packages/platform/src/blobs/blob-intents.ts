import type { SqliteDatabase } from '../sqlite/open-database.js';

/** A note that blobs under a prefix (or one exact key) are being written or deleted. */
export interface BlobIntent {
  prefix: string;
  /** When it was first noted (ISO 8601). */
  created_at: string;
}

/**
 * Notes of blob work in progress, kept in a service's own database.
 *
 * A blob store and a database cannot be written in one transaction. So a service notes a prefix
 * (or a key) before it writes blobs that a row will refer to, or deletes blobs that a row referred
 * to, and removes the note once the row is committed (or the deletion is done). A note that is
 * still there when no request can be working on it any more was left by a process that died
 * midway: the service settles it (see sweepBlobIntents), keeping the blobs a row refers to and
 * deleting the rest.
 *
 * Contract (shared by the SQLite and the MongoDB adapters):
 * - add is idempotent: a prefix is noted once, and stays as old as its first note;
 * - remove is idempotent;
 * - olderThan answers the notes made before a time, oldest first, at most `limit` of them.
 */
export interface BlobIntents {
  add(prefix: string): Promise<void>;
  remove(prefix: string): Promise<void>;
  olderThan(before: string, limit: number): Promise<BlobIntent[]>;
}

/**
 * The blob_intents table; include this statement in a migration of the service that uses
 * SqliteBlobIntents. A migration, once applied, never changes: if the table must change one day,
 * that is a new migration, and this constant stays as it is.
 */
export const BLOB_INTENTS_TABLE_SQL = `
  CREATE TABLE blob_intents (
    prefix TEXT PRIMARY KEY,
    created_at TEXT NOT NULL
  );
  CREATE INDEX blob_intents_by_age ON blob_intents (created_at);`;

/** Blob intents in a service's SQLite database (one row each, committed at once). */
export class SqliteBlobIntents implements BlobIntents {
  constructor(private readonly db: SqliteDatabase) {}

  async add(prefix: string): Promise<void> {
    this.db
      .prepare('INSERT INTO blob_intents (prefix, created_at) VALUES (?, ?) ON CONFLICT (prefix) DO NOTHING')
      .run(prefix, new Date().toISOString());
  }

  async remove(prefix: string): Promise<void> {
    this.db.prepare('DELETE FROM blob_intents WHERE prefix = ?').run(prefix);
  }

  async olderThan(before: string, limit: number): Promise<BlobIntent[]> {
    return this.db
      .prepare('SELECT prefix, created_at FROM blob_intents WHERE created_at < ? ORDER BY created_at, prefix LIMIT ?')
      .all(before, limit) as BlobIntent[];
  }
}

/** How old a note must be before a process that shares its database with others settles it. */
export const BLOB_INTENT_GRACE_MS = 3600_000;

/**
 * Up to when a process may settle notes now. A store that belongs to this process alone (the
 * embedded SQLite one) holds only notes of its dead runs: all of them. A shared database may hold
 * notes of live replicas: only those old enough that no request can still be working on them.
 */
export function intentsSettledBefore(sharedStore: boolean, now = Date.now()): Date {
  return new Date(sharedStore ? now - BLOB_INTENT_GRACE_MS : now);
}

export interface BlobIntentSweep {
  /** Notes settled. */
  notes: number;
  /** Blobs deleted. */
  blobs: number;
}

/**
 * Settles every note made before `before`, in batches: `settle` decides what of the noted blobs
 * no row refers to and deletes it (answering how many blobs went), then the note goes. At the
 * start of the only process that uses a store, every note is from a dead run (`before` = now);
 * with replicas sharing a database, only notes old enough that no request can still be working on
 * them. An error in `settle` stops the sweep with the note kept, to be tried again later.
 */
export async function sweepBlobIntents(
  intents: BlobIntents,
  before: Date,
  settle: (prefix: string) => Promise<number>,
): Promise<BlobIntentSweep> {
  const swept: BlobIntentSweep = { notes: 0, blobs: 0 };
  for (;;) {
    const batch = await intents.olderThan(before.toISOString(), 100);
    if (batch.length === 0) return swept;
    for (const { prefix } of batch) {
      swept.blobs += await settle(prefix);
      await intents.remove(prefix);
      swept.notes += 1;
    }
  }
}
