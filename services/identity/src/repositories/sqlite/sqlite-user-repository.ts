import { appendToOutbox, decodeCursor, encodeCursor, SqliteBlobIntents, SqliteOutboxStore, type SqliteDatabase } from '@portal/platform';
import type { UserChanges, UserRecord } from '../../domain/user-record.js';
import { DuplicateUserError, type PendingEvent, type UserPage, type UserRepository } from '../user-repository.js';

type UserRow = Omit<UserRecord, 'video_watched' | 'email_verified' | 'sms_reminders'> & { video_watched: number; email_verified: number; sms_reminders: number };

const COLUMNS = [
  'username',
  'full_name',
  'email',
  'phone_number',
  'pronouns',
  'role',
  'password_hash',
  'verification_photo_key',
  'avatar_key',
  'video_watched',
  'email_verified',
  'terms_version',
  'terms_accepted_at',
  'sms_reminders',
  'updated_at',
] as const;

export class SqliteUserRepository implements UserRepository {
  readonly outbox: SqliteOutboxStore;
  readonly blobIntents: SqliteBlobIntents;

  constructor(private readonly db: SqliteDatabase) {
    this.outbox = new SqliteOutboxStore(db);
    this.blobIntents = new SqliteBlobIntents(db);
  }

  async findById(id: string): Promise<UserRecord | null> {
    return fromRow(this.db.prepare('SELECT * FROM users WHERE id = ?').get(id) as UserRow | undefined);
  }

  async findByUsername(username: string): Promise<UserRecord | null> {
    return fromRow(this.db.prepare('SELECT * FROM users WHERE username = ?').get(username) as UserRow | undefined);
  }

  async findByEmail(email: string): Promise<UserRecord | null> {
    return fromRow(this.db.prepare('SELECT * FROM users WHERE email = ?').get(email) as UserRow | undefined);
  }

  async create(user: UserRecord, events: PendingEvent[]): Promise<void> {
    this.write(() => {
      this.db
        .prepare(
          `INSERT INTO users (id, ${COLUMNS.join(', ')}, created_at)
           VALUES (@id, ${COLUMNS.map((column) => `@${column}`).join(', ')}, @created_at)`,
        )
        .run(toRow(user));
      this.appendNow(events);
    });
  }

  async update(id: string, changes: UserChanges, events: PendingEvent[]): Promise<UserRecord | null> {
    const columns = COLUMNS.filter((column) => column in changes);
    let updated: UserRecord | null = null;
    this.write(() => {
      if (columns.length > 0) {
        const result = this.db
          .prepare(`UPDATE users SET ${columns.map((column) => `${column} = @${column}`).join(', ')} WHERE id = @id`)
          .run({ ...toRow(changes), id });
        if (result.changes === 0) return;
      }
      updated = fromRow(this.db.prepare('SELECT * FROM users WHERE id = ?').get(id) as UserRow | undefined);
      if (updated) this.appendNow(events);
    });
    return updated;
  }

  async delete(id: string, events: PendingEvent[]): Promise<boolean> {
    let deleted = false;
    this.write(() => {
      deleted = this.db.prepare('DELETE FROM users WHERE id = ?').run(id).changes > 0;
      if (deleted) {
        this.db.prepare('DELETE FROM sessions WHERE user_id = ?').run(id);
        this.appendNow(events);
      }
    });
    return deleted;
  }

  async appendEvents(events: PendingEvent[]): Promise<void> {
    this.write(() => this.appendNow(events));
  }

  async list(limit: number, cursor?: string): Promise<UserPage> {
    const after = cursor ? decodeCursor(cursor) : null;
    const rows = (
      after
        ? this.db
            .prepare('SELECT * FROM users WHERE (created_at, id) > (?, ?) ORDER BY created_at, id LIMIT ?')
            .all(after[0], after[1], limit + 1)
        : this.db.prepare('SELECT * FROM users ORDER BY created_at, id LIMIT ?').all(limit + 1)
    ) as UserRow[];
    const items = rows.slice(0, limit).map((row) => fromRow(row)!);
    const last = items.at(-1);
    return { items, nextCursor: rows.length > limit && last ? encodeCursor([last.created_at, last.id]) : null };
  }

  async countAdmins(): Promise<number> {
    return (this.db.prepare('SELECT COUNT(*) AS n FROM users WHERE role <> 1').get() as { n: number }).n;
  }

  async ping(): Promise<void> {
    this.db.prepare('SELECT 1').get();
  }

  private appendNow(events: PendingEvent[]): void {
    for (const { topic, event } of events) appendToOutbox(this.db, topic, event);
  }

  private write(work: () => void): void {
    try {
      this.db.transaction(work).immediate();
    } catch (error) {
      const message = (error as Error).message ?? '';
      if ((error as { code?: string }).code === 'SQLITE_CONSTRAINT_UNIQUE') {
        throw new DuplicateUserError(message.includes('users.email') ? 'email' : 'username');
      }
      throw error;
    }
  }
}

function toRow(user: UserChanges & { id?: string; created_at?: string }): Record<string, unknown> {
  const row: Record<string, unknown> = { ...user };
  if (user.video_watched !== undefined) row.video_watched = user.video_watched ? 1 : 0;
  if (user.email_verified !== undefined) row.email_verified = user.email_verified ? 1 : 0;
  if (user.sms_reminders !== undefined) row.sms_reminders = user.sms_reminders ? 1 : 0;
  return row;
}

function fromRow(row: UserRow | undefined): UserRecord | null {
  if (!row) return null;
  return { ...row, video_watched: row.video_watched === 1, email_verified: row.email_verified === 1, sms_reminders: row.sms_reminders !== 0 };
}
