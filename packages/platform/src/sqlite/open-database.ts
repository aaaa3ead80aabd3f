import Database from 'better-sqlite3';
import { mkdirSync } from 'node:fs';
import { dirname } from 'node:path';

export type SqliteDatabase = Database.Database;

/**
 * Opens (creating if needed) a SQLite file tuned for a small server: write-ahead logging so that
 * readers never wait for the writer, a busy timeout instead of immediate SQLITE_BUSY errors,
 * and foreign keys on. Each migration runs once, in order, tracked by PRAGMA user_version.
 */
export function openDatabase(file: string, migrations: readonly string[] = []): SqliteDatabase {
  if (file !== ':memory:') mkdirSync(dirname(file), { recursive: true });
  const db = new Database(file);
  db.pragma('journal_mode = WAL');
  db.pragma('synchronous = NORMAL');
  db.pragma('busy_timeout = 5000');
  db.pragma('foreign_keys = ON');
  migrate(db, migrations);
  return db;
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
