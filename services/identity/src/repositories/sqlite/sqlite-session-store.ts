import type { SqliteDatabase } from '@portal/platform';
import type { SessionRecord, SessionStore } from '../user-repository.js';

interface SessionRow {
  id: string;
  user_id: string;
  created_at: number;
  expires_at: number;
}

export class SqliteSessionStore implements SessionStore {
  private lastSweep = 0;

  constructor(private readonly db: SqliteDatabase) {}

  async create(session: SessionRecord): Promise<void> {
    this.db
      .prepare('INSERT INTO sessions (id, user_id, created_at, expires_at) VALUES (?, ?, ?, ?)')
      .run(session.id, session.userId, session.createdAt, session.expiresAt);
    this.sweepExpired();
  }

  async find(id: string): Promise<SessionRecord | null> {
    const row = this.db.prepare('SELECT * FROM sessions WHERE id = ? AND expires_at > ?').get(id, Date.now()) as SessionRow | undefined;
    return row ? { id: row.id, userId: row.user_id, createdAt: row.created_at, expiresAt: row.expires_at } : null;
  }

  async extend(id: string, expiresAt: number): Promise<void> {
    this.db.prepare('UPDATE sessions SET expires_at = ? WHERE id = ?').run(expiresAt, id);
  }

  async delete(id: string): Promise<boolean> {
    return this.db.prepare('DELETE FROM sessions WHERE id = ?').run(id).changes > 0;
  }

  async deleteForUser(userId: string): Promise<string[]> {
    return this.db.transaction(() => {
      const ids = (this.db.prepare('SELECT id FROM sessions WHERE user_id = ?').all(userId) as { id: string }[]).map((row) => row.id);
      this.db.prepare('DELETE FROM sessions WHERE user_id = ?').run(userId);
      return ids;
    })();
  }

  async ping(): Promise<void> {
    this.db.prepare('SELECT 1').get();
  }

  /** Expired sessions are refused on read; this only keeps the table small (at most hourly). */
  private sweepExpired(): void {
    const now = Date.now();
    if (now - this.lastSweep < 3600_000) return;
    this.lastSweep = now;
    this.db.prepare('DELETE FROM sessions WHERE expires_at <= ?').run(now);
  }
}
