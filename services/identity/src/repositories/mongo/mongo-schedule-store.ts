import type { Connection } from 'mongoose';
import { isDuplicateKeyError, serialWrite } from '@portal/platform';
import type { ScheduleStore } from '../schedule-store.js';

interface ScheduleDocument {
  _id: string;
  last_at: string;
}

/**
 * Schedule runs in identity's MongoDB database (collection schedule_runs): a conditional update
 * (or the first insert) decides which replica runs, so a run happens once per period.
 */
export class MongoScheduleStore implements ScheduleStore {
  private readonly runs;

  constructor(connection: Connection) {
    this.runs = connection.collection<ScheduleDocument>('schedule_runs');
  }

  async claim(name: string, now: Date, everyMs: number): Promise<{ previous: string } | null> {
    const cutoff = new Date(now.getTime() - everyMs).toISOString();
    return serialWrite(this.runs, async () => {
      const before = await this.runs.findOneAndUpdate(
        { _id: name, last_at: { $lte: cutoff } },
        { $set: { last_at: now.toISOString() } },
        { returnDocument: 'before' },
      );
      if (before) return { previous: before.last_at };
      try {
        await this.runs.insertOne({ _id: name, last_at: now.toISOString() });
        return { previous: cutoff };
      } catch (error) {
        if (isDuplicateKeyError(error)) return null;
        throw error;
      }
    });
  }
}
