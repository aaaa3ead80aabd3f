import type { AppointmentDelivery, AppointmentStatus } from '@portal/contracts';
import { appendToOutbox, type SqliteDatabase } from '@portal/platform';
import { DuplicateAppointmentError, type AppointmentRecord, type AppointmentStore } from '../appointment-store.js';
import type { PendingEvent } from '../user-repository.js';

/** A row; its user_id column (a link kept before accounts were derived from confirmed addresses) is read by nobody. */
type AppointmentRow = Omit<AppointmentRecord, 'deliveries'> & { deliveries_json: string; user_id?: string | null };

const COLUMNS = [
  'email',
  'name',
  'start',
  'time_zone',
  'place',
  'note',
  'phone_input',
  'version',
  'status',
  'status_updated_at',
  'deliveries_json',
  'created_at',
  'updated_at',
] as const;

/** Appointments in identity.sqlite (table appointments), with their events in the same transaction. */
export class SqliteAppointmentStore implements AppointmentStore {
  constructor(private readonly db: SqliteDatabase) {}

  async findById(id: string): Promise<AppointmentRecord | null> {
    return fromRow(this.db.prepare('SELECT * FROM appointments WHERE id = ?').get(id) as AppointmentRow | undefined);
  }

  async findByEmail(email: string): Promise<AppointmentRecord | null> {
    return fromRow(this.db.prepare('SELECT * FROM appointments WHERE email = ?').get(email) as AppointmentRow | undefined);
  }

  async listBetween(from: string, to: string): Promise<AppointmentRecord[]> {
    const rows = this.db
      .prepare('SELECT * FROM appointments WHERE start >= ? AND start < ? ORDER BY start, id')
      .all(from, to) as AppointmentRow[];
    return rows.map((row) => fromRow(row)!);
  }

  async create(record: AppointmentRecord, events: PendingEvent[]): Promise<void> {
    try {
      this.write(() => {
        this.db
          .prepare(`INSERT INTO appointments (id, ${COLUMNS.join(', ')}) VALUES (@id, ${COLUMNS.map((column) => `@${column}`).join(', ')})`)
          .run(toRow(record));
        this.append(events);
      });
    } catch (error) {
      if ((error as { code?: string }).code === 'SQLITE_CONSTRAINT_UNIQUE') throw new DuplicateAppointmentError();
      throw error;
    }
  }

  async replace(record: AppointmentRecord, expectedVersion: number, events: PendingEvent[]): Promise<boolean> {
    let replaced = false;
    try {
      this.write(() => {
        replaced =
          this.db
            .prepare(
              `UPDATE appointments SET ${COLUMNS.map((column) => `${column} = @${column}`).join(', ')} WHERE id = @id AND version = @expected`,
            )
            .run({ ...toRow(record), expected: expectedVersion }).changes > 0;
        if (replaced) this.append(events);
      });
    } catch (error) {
      if ((error as { code?: string }).code === 'SQLITE_CONSTRAINT_UNIQUE') throw new DuplicateAppointmentError();
      throw error;
    }
    return replaced;
  }

  async setStatus(id: string, status: AppointmentStatus, at: string, events: PendingEvent[]): Promise<AppointmentRecord | null> {
    let changed = false;
    this.write(() => {
      changed = this.db.prepare('UPDATE appointments SET status = ?, status_updated_at = ? WHERE id = ?').run(status, at, id).changes > 0;
      if (changed) this.append(events);
    });
    return changed ? this.findById(id) : null;
  }

  async recordDelivery(id: string, version: number, delivery: AppointmentDelivery): Promise<boolean> {
    let recorded = false;
    this.write(() => {
      const row = this.db.prepare('SELECT deliveries_json FROM appointments WHERE id = ? AND version = ?').get(id, version) as
        { deliveries_json: string } | undefined;
      if (!row) return;
      const deliveries = withDelivery(JSON.parse(row.deliveries_json) as AppointmentDelivery[], delivery);
      this.db.prepare('UPDATE appointments SET deliveries_json = ? WHERE id = ?').run(JSON.stringify(deliveries), id);
      recorded = true;
    });
    return recorded;
  }

  async delete(id: string, events: PendingEvent[]): Promise<boolean> {
    let deleted = false;
    this.write(() => {
      deleted = this.db.prepare('DELETE FROM appointments WHERE id = ?').run(id).changes > 0;
      if (deleted) this.append(events);
    });
    return deleted;
  }

  async ping(): Promise<void> {
    this.db.prepare('SELECT 1 FROM appointments LIMIT 1').get();
  }

  private append(events: PendingEvent[]): void {
    for (const { topic, event } of events) appendToOutbox(this.db, topic, event);
  }

  private write(work: () => void): void {
    this.db.transaction(work).immediate();
  }
}

/** The deliveries with one record added or replaced (same key). */
export function withDelivery(deliveries: AppointmentDelivery[], delivery: AppointmentDelivery): AppointmentDelivery[] {
  return [...deliveries.filter((existing) => existing.key !== delivery.key), delivery];
}

function toRow(record: AppointmentRecord): Record<string, unknown> {
  const { deliveries, ...rest } = record;
  return { ...rest, deliveries_json: JSON.stringify(deliveries) };
}

/** Field by field (a call sheet reads thousands of rows: a rest and a spread cost V8 several times more). */
function fromRow(row: AppointmentRow | undefined): AppointmentRecord | null {
  if (!row) return null;
  return {
    id: row.id,
    email: row.email,
    name: row.name,
    start: row.start,
    time_zone: row.time_zone,
    place: row.place,
    note: row.note,
    phone_input: row.phone_input,
    version: row.version,
    status: row.status,
    status_updated_at: row.status_updated_at,
    deliveries: JSON.parse(row.deliveries_json) as AppointmentDelivery[],
    created_at: row.created_at,
    updated_at: row.updated_at,
  };
}
