import type { EventEnvelope } from '@portal/contracts';
import type { OutboxEntry, OutboxStore } from '../events/outbox.js';
import type { SqliteDatabase } from './open-database.js';

/** The outbox table; include this statement in a service's SQLite migrations. */
export const OUTBOX_TABLE_SQL = `
  CREATE TABLE outbox (
    seq INTEGER PRIMARY KEY AUTOINCREMENT,
    id TEXT NOT NULL UNIQUE,
    topic TEXT NOT NULL,
    payload TEXT NOT NULL,
    created_at INTEGER NOT NULL
  );`;

/** Adds an event to the outbox; call it inside the transaction that makes the state change. */
export function appendToOutbox(db: SqliteDatabase, topic: string, event: EventEnvelope): void {
  db.prepare('INSERT INTO outbox (id, topic, payload, created_at) VALUES (?, ?, ?, ?)').run(
    event.id,
    topic,
    JSON.stringify(event),
    Date.now(),
  );
}

export class SqliteOutboxStore implements OutboxStore {
  constructor(private readonly db: SqliteDatabase) {}

  async pending(limit: number): Promise<OutboxEntry[]> {
    const rows = this.db.prepare('SELECT id, topic, payload FROM outbox ORDER BY seq LIMIT ?').all(limit) as {
      id: string;
      topic: string;
      payload: string;
    }[];
    return rows.map((row) => ({ id: row.id, topic: row.topic, event: JSON.parse(row.payload) as EventEnvelope }));
  }

  async markPublished(ids: string[]): Promise<void> {
    const remove = this.db.prepare('DELETE FROM outbox WHERE id = ?');
    this.db.transaction(() => {
      for (const id of ids) remove.run(id);
    })();
  }
}
