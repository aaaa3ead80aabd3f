import { appendToOutbox, decodeCursor, encodeCursor, SqliteBlobIntents, SqliteOutboxStore, type SqliteDatabase } from '@portal/platform';
import type { UserChanges, UserRecord } from '../../domain/user-record.js';
import { usernameKey, usernameLook } from '../../domain/username-key.js';
import { DuplicateUserError, type PendingEvent, type UserPage, type UserRepository } from '../user-repository.js';

type UserRow = Omit<UserRecord, 'video_watched' | 'email_verified' | 'sms_reminders'> & {
  video_watched: number;
  email_verified: number;
  sms_reminders: number;
  username_key?: string | null;
  username_look?: string | null;
};

/** Addresses in one IN list: every full chunk is the same (cached) statement, far below SQLite's parameter limit. */
const ADDRESSES_PER_QUERY = 500;

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
    this.fillUsernameKeys();
  }

  /**
   * Rows written before usernames had a key get theirs. Two older names that turn out to look
   * alike both stay (the later one's key carries its id); new look-alikes of either are refused.
   */
  private fillUsernameKeys(): void {
    const rows = this.db
      .prepare('SELECT id, username FROM users WHERE username_key IS NULL OR username_look IS NULL ORDER BY created_at, id')
      .all() as { id: string; username: string }[];
    if (rows.length === 0) return;
    const keyTaken = this.db.prepare('SELECT 1 FROM users WHERE username_key = ?');
    const lookTaken = this.db.prepare('SELECT 1 FROM users WHERE username_look = ?');
    const set = this.db.prepare('UPDATE users SET username_key = ?, username_look = ? WHERE id = ?');
    this.db.transaction(() => {
      for (const row of rows) {
        const key = usernameKey(row.username);
        const look = usernameLook(row.username);
        set.run(keyTaken.get(key) ? `${key}#${row.id}` : key, lookTaken.get(look) ? `${look}#${row.id}` : look, row.id);
      }
    })();
  }

  async findById(id: string): Promise<UserRecord | null> {
    return fromRow(this.db.prepare('SELECT * FROM users WHERE id = ?').get(id) as UserRow | undefined);
  }

  async findByUsername(username: string): Promise<UserRecord | null> {
    // The same name in any case, else a name that looks like it.
    const row =
      this.db.prepare('SELECT * FROM users WHERE username_key = ?').get(usernameKey(username)) ??
      this.db.prepare('SELECT * FROM users WHERE username_look = ?').get(usernameLook(username));
    return fromRow(row as UserRow | undefined);
  }

  async findByEmail(email: string): Promise<UserRecord | null> {
    return fromRow(this.db.prepare('SELECT * FROM users WHERE email = ?').get(email) as UserRow | undefined);
  }

  async findByEmails(emails: readonly string[]): Promise<UserRecord[]> {
    // By id: one address asked twice (in two cases, in two chunks) is one account.
    const found = new Map<string, UserRecord>();
    // The column's NOCASE collation compares, as for findByEmail; the unique index answers each.
    for (let at = 0; at < emails.length; at += ADDRESSES_PER_QUERY) {
      const chunk = emails.slice(at, at + ADDRESSES_PER_QUERY);
      const rows = this.db.prepare(`SELECT * FROM users WHERE email IN (${chunk.map(() => '?').join(', ')})`).all(...chunk) as UserRow[];
      for (const row of rows) found.set(row.id, fromRow(row)!);
    }
    return [...found.values()];
  }

  async create(user: UserRecord, events: PendingEvent[]): Promise<void> {
    this.write(() => {
      this.db
        .prepare(
          `INSERT INTO users (id, ${COLUMNS.join(', ')}, username_key, username_look, created_at)
           VALUES (@id, ${COLUMNS.map((column) => `@${column}`).join(', ')}, @username_key, @username_look, @created_at)`,
        )
        .run(toRow(user));
      this.appendNow(events);
    });
  }

  async update(id: string, changes: UserChanges, events: PendingEvent[]): Promise<UserRecord | null> {
    const columns: string[] = COLUMNS.filter((column) => column in changes);
    if (changes.username !== undefined) columns.push('username_key', 'username_look');
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
  if (user.username !== undefined) {
    row.username_key = usernameKey(user.username);
    row.username_look = usernameLook(user.username);
  }
  if (user.video_watched !== undefined) row.video_watched = user.video_watched ? 1 : 0;
  if (user.email_verified !== undefined) row.email_verified = user.email_verified ? 1 : 0;
  if (user.sms_reminders !== undefined) row.sms_reminders = user.sms_reminders ? 1 : 0;
  return row;
}

function fromRow(row: UserRow | undefined): UserRecord | null {
  if (!row) return null;
  const { username_key: _key, username_look: _look, ...record } = row;
  return {
    ...record,
    video_watched: row.video_watched === 1,
    email_verified: row.email_verified === 1,
    sms_reminders: row.sms_reminders !== 0,
  };
}
