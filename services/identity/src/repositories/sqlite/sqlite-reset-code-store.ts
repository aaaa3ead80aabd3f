import type { SqliteDatabase } from '@portal/platform';
import type { ResetCodeRecord, ResetCodeStore } from '../user-repository.js';

export class SqliteResetCodeStore implements ResetCodeStore {
  constructor(private readonly db: SqliteDatabase) {}

  async put(record: ResetCodeRecord): Promise<void> {
    this.db
      .prepare(
        `INSERT INTO reset_codes (user_id, code_hash, expires_at, attempts_left, created_at) VALUES (?, ?, ?, ?, ?)
         ON CONFLICT (user_id) DO UPDATE SET code_hash = excluded.code_hash, expires_at = excluded.expires_at,
           attempts_left = excluded.attempts_left, created_at = excluded.created_at`,
      )
      .run(record.userId, record.codeHash, record.expiresAt, record.attemptsLeft, Date.now());
  }

  async get(userId: string): Promise<ResetCodeRecord | null> {
    const row = this.db.prepare('SELECT * FROM reset_codes WHERE user_id = ?').get(userId) as
      { user_id: string; code_hash: string; expires_at: number; attempts_left: number } | undefined;
    return row ? { userId: row.user_id, codeHash: row.code_hash, expiresAt: row.expires_at, attemptsLeft: row.attempts_left } : null;
  }

  async takeAttempt(userId: string, now: number): Promise<ResetCodeRecord | null> {
    // One conditional update: the check and the decrement cannot be split by another guess.
    const row = this.db
      .prepare(
        `UPDATE reset_codes SET attempts_left = attempts_left - 1
         WHERE user_id = ? AND attempts_left > 0 AND expires_at > ?
         RETURNING code_hash, expires_at, attempts_left`,
      )
      .get(userId, now) as { code_hash: string; expires_at: number; attempts_left: number } | undefined;
    return row ? { userId, codeHash: row.code_hash, expiresAt: row.expires_at, attemptsLeft: row.attempts_left } : null;
  }

  async returnAttempt(userId: string): Promise<void> {
    this.db.prepare('UPDATE reset_codes SET attempts_left = attempts_left + 1 WHERE user_id = ?').run(userId);
  }

  async delete(userId: string): Promise<void> {
    this.db.prepare('DELETE FROM reset_codes WHERE user_id = ?').run(userId);
  }
}
