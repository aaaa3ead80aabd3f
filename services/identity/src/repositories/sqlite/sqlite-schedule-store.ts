import type { SqliteDatabase } from '@portal/platform';
import type { ScheduleStore } from '../schedule-store.js';

/** Schedule runs in identity.sqlite (table schedule_runs); one process owns the file. */
export class SqliteScheduleStore implements ScheduleStore {
  constructor(private readonly db: SqliteDatabase) {}

  async claim(name: string, now: Date, everyMs: number): Promise<{ previous: string } | null> {
    const cutoff = new Date(now.getTime() - everyMs).toISOString();
    return this.db
      .transaction(() => {
        const row = this.db.prepare('SELECT last_at FROM schedule_runs WHERE name = ?').get(name) as { last_at: string } | undefined;
        if (row && row.last_at > cutoff) return null;
        this.db
          .prepare('INSERT INTO schedule_runs (name, last_at) VALUES (?, ?) ON CONFLICT (name) DO UPDATE SET last_at = excluded.last_at')
          .run(name, now.toISOString());
        return { previous: row?.last_at ?? cutoff };
      })
      .immediate();
  }
}
