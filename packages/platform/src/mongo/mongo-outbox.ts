import type { EventEnvelope } from '@portal/contracts';
import type { Connection, Model } from 'mongoose';
import { Schema } from 'mongoose';
import type { OutboxEntry, OutboxStore } from '../events/outbox.js';
import { serialWrite } from './serial-writes.js';

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
      const documents = await model
        .find({ '_outbox.0': { $exists: true } }, { _outbox: 1 })
        .limit(limit)
        .lean();
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
    const published = new Set(ids);
    for (const model of this.aggregates) {
      const owners = await model.find({ '_outbox.id': { $in: ids } }, { _id: 1 }).lean();
      for (const { _id } of owners as { _id: string }[]) await serialWrite(model, () => this.removeEvents(model, _id, published));
      await serialWrite(model, () => model.deleteMany({ _deleted: true, _outbox: { $size: 0 } }));
    }
    await this.standalone.deleteMany({ _id: { $in: ids } });
  }

  /**
   * Takes published events out of one document: a conditional $pull, one atomic write, where the
   * server applies it (MongoDB, mongo-java-server). FerretDB v1 accepts it and changes nothing, so
   * when nothing changed the events are taken out by a read-modify-write guarded by the document's
   * `_outboxVersion`, which every write that adds events increments: a concurrent change makes the
   * guarded write miss, and it is tried again on fresh data (on FerretDB, where updates queue in
   * this process, only another replica's change can).
   */
  private async removeEvents(model: Model<any>, id: string, published: Set<string>): Promise<void> {
    const pulled = await model.updateOne({ _id: id }, { $pull: { _outbox: { id: { $in: [...published] } } } });
    if (pulled.modifiedCount === 1) return;
    for (let attempt = 0; attempt < 10; attempt++) {
      const document = (await model.findOne({ _id: id }, { _outbox: 1, _outboxVersion: 1 }).lean()) as {
        _outbox: EmbeddedEvent[];
        _outboxVersion?: number;
      } | null;
      if (!document) return;
      const remaining = document._outbox.filter((entry) => !published.has(entry.id));
      if (remaining.length === document._outbox.length) return;
      const version = document._outboxVersion ?? 0;
      const result = await model.updateOne(
        { _id: id, _outboxVersion: version },
        { $set: { _outbox: remaining, _outboxVersion: version + 1 } },
      );
      if (result.matchedCount === 1) return;
    }
    throw new Error(`could not mark the outbox of ${id} as published: it kept changing`);
  }
}

/** The update that appends events to an aggregate's outbox (and moves its version on). */
export function outboxPush(events: EmbeddedEvent[]): { $push: { _outbox: { $each: EmbeddedEvent[] } }; $inc: { _outboxVersion: number } } {
  return { $push: { _outbox: { $each: events } }, $inc: { _outboxVersion: 1 } };
}

/**
 * A unique-index violation: MongoDB's E11000, or what FerretDB (on SQLite) answers for an update
 * that breaks a unique index. Which index is not reliably named by every server, so callers find
 * the taken value themselves.
 */
export function isDuplicateKeyError(error: unknown): boolean {
  const mongoError = error as { code?: number; message?: string };
  return mongoError?.code === 11000 || /E11000|UNIQUE constraint failed/.test(mongoError?.message ?? '');
}
