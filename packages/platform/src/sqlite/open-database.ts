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
  reuseStatements(db);
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

/** How many prepared statements one connection keeps for reuse. */
export const STATEMENT_CACHE_SIZE = 256;

/**
 * Makes db.prepare answer the statement it prepared before for the same SQL text. The repositories
 * prepare their statements where they use them, and compiling SQL on every call was a few percent
 * of the all-in-one process's main thread under a festival's uploads (bench/festival --profile).
 * A statement is safe to share here: none is bound (.bind), switched to pluck/raw/expand or
 * iterated, and SQLite recompiles a statement by itself after a schema change. At most
 * STATEMENT_CACHE_SIZE are kept, the least recently used going first (the few statements built
 * from a list of columns come in a bounded number of shapes).
 */
export function reuseStatements(db: SqliteDatabase): void {
  const prepare = db.prepare.bind(db);
  const statements = new Map<string, Database.Statement>();
  db.prepare = ((source: string) => {
    let statement = statements.get(source);
    if (statement) {
      statements.delete(source);
    } else {
      statement = prepare(source);
      if (statements.size >= STATEMENT_CACHE_SIZE) statements.delete(statements.keys().next().value!);
    }
    statements.set(source, statement);
    return statement;
  }) as typeof db.prepare;
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
