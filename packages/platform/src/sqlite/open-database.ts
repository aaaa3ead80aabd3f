import Database from 'better-sqlite3';
import { mkdirSync } from 'node:fs';
import { dirname } from 'node:path';

export type SqliteDatabase = Database.Database;

/** How often the write-ahead log is folded into the database file and emptied (ms). */
export const WAL_SCRUB_INTERVAL_MS = 2000;

/**
 * Opens (creating if needed) a SQLite file tuned for a small server: write-ahead logging so that
 * readers never wait for the writer, a busy timeout instead of immediate SQLITE_BUSY errors,
 * and foreign keys on. Each migration runs once, in order, tracked by PRAGMA user_version.
 *
 * Deleted means gone from the disk too: secure_delete overwrites deleted rows (and freed pages)
 * with zeros, and every WAL_SCRUB_INTERVAL_MS the write-ahead log, which still holds the pages
 * as they were before, is checkpointed and truncated to nothing.
 */
export function openDatabase(file: string, migrations: readonly string[] = []): SqliteDatabase {
  if (file !== ':memory:') mkdirSync(dirname(file), { recursive: true });
  const db = new Database(file);
  db.pragma('journal_mode = WAL');
  db.pragma('synchronous = NORMAL');
  db.pragma('busy_timeout = 5000');
  db.pragma('foreign_keys = ON');
  db.pragma('secure_delete = ON');
  migrate(db, migrations);
  if (file !== ':memory:') {
    const timer = setInterval(() => {
      if (!db.open) {
        clearInterval(timer);
        return;
      }
      scrubWal(db);
    }, WAL_SCRUB_INTERVAL_MS);
    timer.unref();
  }
  return db;
}

/**
 * Copies the write-ahead log into the database file and truncates it to zero bytes, so that old
 * page images (of rows since deleted) do not linger in it. Never waits: when another connection
 * is busy it answers false and the next pass tries again.
 */
export function scrubWal(db: SqliteDatabase): boolean {
  try {
    db.pragma('busy_timeout = 0');
    const [result] = db.pragma('wal_checkpoint(TRUNCATE)') as { busy: number }[];
    return result?.busy === 0;
  } catch {
    return false;
  } finally {
    if (db.open) db.pragma('busy_timeout = 5000');
  }
}

export function migrate(db: SqliteDatabase, migrations: readonly string[]): void {
  const current = db.pragma('user_version', { simple: true }) as number;
  for (let version = current; version < migrations.length; version++) {
    const sql = migrations[version]!;
    db.transaction(() => {
      db.exec(sql);
      db.pragma(`user_version = ${version + 1}`);
    }).immediate();
  }
}
