import type { SqliteDatabase } from '@portal/platform';
import type { Author, AuthorDirectory } from '../author-directory.js';

export class SqliteAuthorDirectory implements AuthorDirectory {
  constructor(private readonly db: SqliteDatabase) {}

  async find(userId: string): Promise<Author | null> {
    const row = this.db.prepare('SELECT user_id, username, avatar_url FROM authors WHERE user_id = ?').get(userId) as
      { user_id: string; username: string; avatar_url: string | null } | undefined;
    return row ? { userId: row.user_id, username: row.username, avatarUrl: row.avatar_url } : null;
  }

  async upsert(author: Author): Promise<void> {
    this.db
      .prepare(
        `INSERT INTO authors (user_id, username, avatar_url) VALUES (?, ?, ?)
         ON CONFLICT (user_id) DO UPDATE SET username = excluded.username, avatar_url = excluded.avatar_url`,
      )
      .run(author.userId, author.username, author.avatarUrl);
  }

  async remove(userId: string): Promise<void> {
    this.db.prepare('DELETE FROM authors WHERE user_id = ?').run(userId);
  }
}
