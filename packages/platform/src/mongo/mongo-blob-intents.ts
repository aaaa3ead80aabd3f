import { Schema, type Connection, type Model } from 'mongoose';
import type { BlobIntent, BlobIntents } from '../blobs/blob-intents.js';
import { isDuplicateKeyError } from './mongo-outbox.js';
import { serialWrite } from './serial-writes.js';

interface BlobIntentDocument {
  _id: string;
  created_at: string;
}

const blobIntentSchema = new Schema<BlobIntentDocument>({ _id: String, created_at: String }, { versionKey: false });
blobIntentSchema.index({ created_at: 1 }, { name: 'by_age' });

/**
 * Blob intents in a service's MongoDB database: one document per note, its prefix as the id, in
 * the `blob_intents` collection. Call ensureIndexes once at start.
 */
export class MongoBlobIntents implements BlobIntents {
  private readonly intents: Model<BlobIntentDocument>;

  constructor(connection: Connection) {
    this.intents =
      (connection.models.BlobIntent as Model<BlobIntentDocument> | undefined) ??
      connection.model<BlobIntentDocument>('BlobIntent', blobIntentSchema, 'blob_intents');
  }

  async ensureIndexes(): Promise<void> {
    await this.intents.createIndexes();
  }

  async add(prefix: string): Promise<void> {
    // An upsert is an update: on FerretDB a read-modify-write, so two of this process's upserts of
    // one prefix must not overlap there (serialWrite queues them). On MongoDB, or from another
    // replica, two upserts of one prefix may race to insert: the loser's duplicate-key error means
    // the note is there, which is all this asks.
    await serialWrite(this.intents, () =>
      this.intents.updateOne({ _id: prefix }, { $setOnInsert: { created_at: new Date().toISOString() } }, { upsert: true }).exec(),
    ).catch((error: unknown) => {
      if (!isDuplicateKeyError(error)) throw error;
    });
  }

  async remove(prefix: string): Promise<void> {
    await serialWrite(this.intents, () => this.intents.deleteOne({ _id: prefix }).exec());
  }

  async olderThan(before: string, limit: number): Promise<BlobIntent[]> {
    const documents = await this.intents
      .find({ created_at: { $lt: before } })
      .sort({ created_at: 1, _id: 1 })
      .limit(limit)
      .lean<BlobIntentDocument[]>();
    return documents.map((document) => ({ prefix: document._id, created_at: document.created_at }));
  }
}
