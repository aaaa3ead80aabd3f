import { Schema, type Connection, type Model } from 'mongoose';
import type { AppointmentDelivery, AppointmentStatus } from '@portal/contracts';
import { embeddedEventSchema, isDuplicateKeyError, outboxPush, serialWrite, toEmbedded, type EmbeddedEvent } from '@portal/platform';
import { DuplicateAppointmentError, type AppointmentRecord, type AppointmentStore } from '../appointment-store.js';
import type { PendingEvent } from '../user-repository.js';
import { withDelivery } from '../sqlite/sqlite-appointment-store.js';

interface AppointmentDocument extends Omit<AppointmentRecord, 'id'> {
  _id: string;
  /** A link kept before accounts were derived from confirmed addresses: read by nobody, cleared by every replace. */
  user_id?: string | null;
  /** Lower-case copy carrying the unique index; freed (deleted:<id>) by a deletion. */
  email_key: string;
  _outbox: EmbeddedEvent[];
  _outboxVersion: number;
  /** Moved on by every delivery record (guards their read-modify-write). */
  _deliveriesVersion?: number;
  _deleted?: boolean;
}

const deliverySchema = new Schema(
  {
    key: String,
    kind: String,
    offset: { type: String, default: null },
    channel: String,
    state: String,
    at: String,
    reason: { type: String, default: null },
  },
  { _id: false },
);

const appointmentSchema = new Schema<AppointmentDocument>(
  {
    _id: String,
    email: { type: String, required: true },
    email_key: { type: String, required: true },
    // Earlier releases linked an account here; read by nobody now, cleared by every write.
    user_id: { type: String, default: null },
    name: { type: String, default: '' },
    start: { type: String, required: true },
    time_zone: String,
    place: String,
    note: String,
    phone_input: String,
    version: Number,
    status: String,
    status_updated_at: { type: String, default: null },
    deliveries: { type: [deliverySchema], default: [] },
    created_at: String,
    updated_at: String,
    _outbox: { type: [embeddedEventSchema], default: [] },
    _outboxVersion: { type: Number, default: 0 },
    _deliveriesVersion: { type: Number, default: 0 },
    _deleted: { type: Boolean, default: false },
  },
  { versionKey: false, minimize: false },
);
appointmentSchema.index({ email_key: 1 }, { unique: true, name: 'email_key_unique' });
appointmentSchema.index({ start: 1, _id: 1 }, { name: 'by_start' });

const LIVE = { _deleted: { $ne: true } };

/** Field by field (a call sheet reads thousands of documents: a rest and a spread cost V8 several times more). */
function toRecord(document: AppointmentDocument | null): AppointmentRecord | null {
  if (!document || document._deleted) return null;
  return {
    id: document._id,
    email: document.email,
    // Documents written before the name field have none.
    name: document.name ?? '',
    start: document.start,
    time_zone: document.time_zone,
    place: document.place,
    note: document.note,
    phone_input: document.phone_input,
    version: document.version,
    status: document.status,
    status_updated_at: document.status_updated_at,
    deliveries: document.deliveries ?? [],
    created_at: document.created_at,
    updated_at: document.updated_at,
  };
}

/**
 * Appointments in identity's MongoDB database (collection appointments): one document each, its
 * pending events inside it (the outbox without transactions, as for users); a deleted one stays a
 * tombstone until its events are out. Its model is handed to the user repository's outbox
 * (MongoUserRepository's otherAggregates) so that the one relay publishes them.
 */
export class MongoAppointmentStore implements AppointmentStore {
  readonly model: Model<AppointmentDocument>;

  constructor(private readonly connection: Connection) {
    this.model = connection.model<AppointmentDocument>('Appointment', appointmentSchema, 'appointments');
  }

  async ensureIndexes(): Promise<void> {
    await this.model.createIndexes();
  }

  async findById(id: string): Promise<AppointmentRecord | null> {
    return toRecord(await this.model.findOne({ _id: id, ...LIVE }).lean<AppointmentDocument>());
  }

  async findByEmail(email: string): Promise<AppointmentRecord | null> {
    return toRecord(await this.model.findOne({ email_key: email.toLowerCase(), ...LIVE }).lean<AppointmentDocument>());
  }

  async listBetween(from: string, to: string): Promise<AppointmentRecord[]> {
    const documents = await this.model
      .find({ start: { $gte: from, $lt: to }, ...LIVE })
      .sort({ start: 1, _id: 1 })
      .lean<AppointmentDocument[]>();
    return documents.map((document) => toRecord(document)!);
  }

  async create(record: AppointmentRecord, events: PendingEvent[]): Promise<void> {
    const { id, ...rest } = record;
    try {
      await this.model.collection.insertOne({
        _id: id,
        ...rest,
        email_key: record.email.toLowerCase(),
        _outbox: toEmbedded(events),
        _outboxVersion: 0,
        _deleted: false,
      } as never);
    } catch (error) {
      if (isDuplicateKeyError(error)) throw new DuplicateAppointmentError();
      throw error;
    }
  }

  async replace(record: AppointmentRecord, expectedVersion: number, events: PendingEvent[]): Promise<boolean> {
    const { id, ...rest } = record;
    try {
      const result = await serialWrite(this.model, () =>
        this.model.updateOne(
          { _id: id, version: expectedVersion, ...LIVE },
          { $set: { ...rest, email_key: record.email.toLowerCase(), user_id: null }, ...outboxPush(toEmbedded(events)) },
        ),
      );
      return result.matchedCount === 1;
    } catch (error) {
      if (isDuplicateKeyError(error)) throw new DuplicateAppointmentError();
      throw error;
    }
  }

  async setStatus(id: string, status: AppointmentStatus, at: string, events: PendingEvent[]): Promise<AppointmentRecord | null> {
    const updated = await serialWrite(this.model, () =>
      this.model
        .findOneAndUpdate(
          { _id: id, ...LIVE },
          { $set: { status, status_updated_at: at }, ...outboxPush(toEmbedded(events)) },
          { new: true },
        )
        .lean<AppointmentDocument>()
        .exec(),
    );
    return toRecord(updated);
  }

  async recordDelivery(id: string, version: number, delivery: AppointmentDelivery): Promise<boolean> {
    // A read-modify-write guarded by _deliveriesVersion: a concurrent record makes the guarded
    // write miss, and it is tried again on fresh data.
    for (let attempt = 0; attempt < 10; attempt++) {
      const document = await this.model
        .findOne({ _id: id, version, ...LIVE }, { deliveries: 1, _deliveriesVersion: 1 })
        .lean<AppointmentDocument>();
      if (!document) return false;
      const seen = document._deliveriesVersion ?? 0;
      const result = await serialWrite(this.model, () =>
        this.model.updateOne(
          { _id: id, version, ...LIVE, ...(seen === 0 ? { _deliveriesVersion: { $in: [0, null] } } : { _deliveriesVersion: seen }) },
          { $set: { deliveries: withDelivery(document.deliveries ?? [], delivery), _deliveriesVersion: seen + 1 } },
        ),
      );
      if (result.matchedCount === 1) return true;
    }
    throw new Error(`could not record a delivery of appointment ${id}: it kept changing`);
  }

  async delete(id: string, events: PendingEvent[]): Promise<boolean> {
    const deleted = await serialWrite(this.model, () =>
      this.model
        .findOneAndUpdate(
          { _id: id, ...LIVE },
          { $set: { _deleted: true, email_key: `deleted:${id}`, user_id: null }, ...outboxPush(toEmbedded(events)) },
        )
        .exec(),
    );
    return deleted !== null;
  }

  async ping(): Promise<void> {
    await this.connection.db!.admin().ping();
  }
}
