import type { EventEnvelope } from '@portal/contracts';
import type { Connection, Model } from 'mongoose';
import { Schema } from 'mongoose';
import type { OutboxEntry, OutboxStore } from '../events/outbox.js';

/** An event waiting inside its aggregate's document. */
export interface EmbeddedEvent {
  id: string;
  topic: string;
  event: EventEnvelope;
}

export const embeddedEventSchema = new Schema<EmbeddedEvent>(
  { id: { type: String, required: true }, topic: { type: String, required: true }, event: { type: Schema.Types.Mixed, required: true } },
  { _id: false },
);

interface StandaloneEvent {
  _id: string;
  topic: string;
  event: EventEnvelope;
  at: number;
}

export function toEmbedded(events: { topic: string; event: EventEnvelope }[]): EmbeddedEvent[] {
  return events.map(({ topic, event }) => ({ id: event.id, topic, event }));
}

/**
 * The transactional outbox without multi-document transactions (FerretDB and single-node
 * MongoDB alike): an aggregate's pending events live in an `_outbox` array inside its own
 * document, so the change and its events are one atomic single-document write. A deleted
 * aggregate stays as a tombstone (`_deleted: true`) until its last event is published.
 * Events that belong to no aggregate go to a collection of their own.
 */
export class MongoOutboxStore implements OutboxStore {
  private readonly standalone: Model<StandaloneEvent>;

  constructor(
    connection: Connection,
    private readonly aggregates: Model<any>[],
    standaloneCollection: string,
  ) {
    this.standalone =
      (connection.models[standaloneCollection] as Model<StandaloneEvent> | undefined) ??
      connection.model<StandaloneEvent>(
        standaloneCollection,
        new Schema<StandaloneEvent>({ _id: String, topic: String, event: Schema.Types.Mixed, at: Number }, { versionKey: false }),
        standaloneCollection,
      );
  }

  async appendStandalone(events: { topic: string; event: EventEnvelope }[]): Promise<void> {
    if (events.length === 0) return;
    await this.standalone.insertMany(events.map(({ topic, event }) => ({ _id: event.id, topic, event, at: Date.now() })));
  }

  async pending(limit: number): Promise<OutboxEntry[]> {
    const entries: OutboxEntry[] = [];
    for (const model of this.aggregates) {
      const documents = await model.find({ '_outbox.0': { $exists: true } }, { _outbox: 1 }).limit(limit).lean();
      for (const document of documents as unknown as { _outbox: EmbeddedEvent[] }[]) {
        for (const pending of document._outbox) entries.push({ id: pending.id, topic: pending.topic, event: pending.event });
      }
    }
    for (const document of await this.standalone.find().sort({ at: 1 }).limit(limit).lean()) {
      entries.push({ id: document._id, topic: document.topic, event: document.event });
    }
    // Across aggregates order does not matter; within one it is the array's order, kept by a stable sort.
    return entries.sort((a, b) => a.event.occurredAt.localeCompare(b.event.occurredAt)).slice(0, limit);
  }

  async markPublished(ids: string[]): Promise<void> {
    for (const model of this.aggregates) {
      await model.updateMany({ '_outbox.id': { $in: ids } }, { $pull: { _outbox: { id: { $in: ids } } } });
      await model.deleteMany({ _deleted: true, _outbox: { $size: 0 } });
    }
    await this.standalone.deleteMany({ _id: { $in: ids } });
  }
}

/** Mongo's duplicate-key error (E11000), with the offending index's field when known. */
export function duplicateKeyField(error: unknown): string | null {
  const mongoError = error as { code?: number; keyPattern?: Record<string, unknown>; message?: string };
  if (mongoError?.code !== 11000) return null;
  const fromPattern = mongoError.keyPattern ? Object.keys(mongoError.keyPattern)[0] : undefined;
  return fromPattern ?? /index: (\w+?)_/.exec(mongoError.message ?? '')?.[1] ?? 'unknown';
}
