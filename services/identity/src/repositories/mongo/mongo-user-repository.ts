import { Schema, type Connection, type Model } from 'mongoose';
import {
  MongoBlobIntents,
  MongoOutboxStore,
  decodeCursor,
  embeddedEventSchema,
  encodeCursor,
  isDuplicateKeyError,
  outboxPush,
  toEmbedded,
  type EmbeddedEvent,
  serialWrite,
} from '@portal/platform';
import type { UserChanges, UserRecord } from '../../domain/user-record.js';
import { usernameKey, usernameLook } from '../../domain/username-key.js';
import { DuplicateUserError, type PendingEvent, type UserPage, type UserRepository } from '../user-repository.js';

interface UserDocument extends Omit<UserRecord, 'id'> {
  _id: string;
  /** Copies carrying the unique indexes: the e-mail in lower case, the username's two keys (domain/username-key.ts). */
  username_key: string;
  username_look: string;
  email_key: string;
  _outbox: EmbeddedEvent[];
  _outboxVersion: number;
  _deleted?: boolean;
}

const userSchema = new Schema<UserDocument>(
  {
    _id: String,
    username: { type: String, required: true },
    username_key: { type: String, required: true },
    username_look: { type: String, required: true },
    full_name: String,
    email: { type: String, required: true },
    email_key: { type: String, required: true },
    phone_number: String,
    pronouns: String,
    role: Number,
    password_hash: String,
    verification_photo_key: { type: String, default: null },
    avatar_key: { type: String, default: null },
    video_watched: Boolean,
    email_verified: Boolean,
    terms_version: { type: String, default: null },
    terms_accepted_at: { type: String, default: null },
    sms_reminders: { type: Boolean, default: true },
    created_at: String,
    updated_at: String,
    _outbox: { type: [embeddedEventSchema], default: [] },
    _outboxVersion: { type: Number, default: 0 },
    _deleted: { type: Boolean, default: false },
  },
  { versionKey: false, minimize: false },
);
userSchema.index({ username_key: 1 }, { unique: true, name: 'username_key_unique' });
userSchema.index({ username_look: 1 }, { unique: true, name: 'username_look_unique' });
userSchema.index({ email_key: 1 }, { unique: true, name: 'email_key_unique' });
userSchema.index({ created_at: 1, _id: 1 }, { name: 'by_created' });

const LIVE = { _deleted: { $ne: true } };
/** Addresses in one $in query: a few tens of kilobytes of BSON, answered from the email_key index. */
const ADDRESSES_PER_QUERY = 1000;

function toRecord(document: UserDocument | null): UserRecord | null {
  if (!document || document._deleted) return null;
  const { _id, username_key: _u, username_look: _l, email_key: _e, _outbox, _outboxVersion, _deleted, ...rest } = document;
  // Accounts stored before text reminders existed have them on.
  return { id: _id, ...rest, sms_reminders: rest.sms_reminders ?? true };
}

function keysOf(changes: UserChanges): Partial<UserDocument> {
  return {
    ...(changes.username !== undefined
      ? { username_key: usernameKey(changes.username), username_look: usernameLook(changes.username) }
      : {}),
    ...(changes.email !== undefined ? { email_key: changes.email.toLowerCase() } : {}),
  };
}

/** Users in MongoDB (mongoose): one document per user with its pending events inside. */
export class MongoUserRepository implements UserRepository {
  readonly outbox: MongoOutboxStore;
  readonly blobIntents: MongoBlobIntents;
  private readonly users: Model<UserDocument>;

  /** otherAggregates: identity's other collections whose documents carry their pending events (appointments). */
  constructor(
    private readonly connection: Connection,
    otherAggregates: Model<any>[] = [],
  ) {
    this.users = connection.model<UserDocument>('User', userSchema, 'users');
    this.outbox = new MongoOutboxStore(connection, [this.users, ...otherAggregates], 'outbox');
    this.blobIntents = new MongoBlobIntents(connection);
  }

  async ensureIndexes(): Promise<void> {
    await this.rekeyUsernames();
    await this.users.createIndexes();
    await this.blobIntents.ensureIndexes();
  }

  async findById(id: string): Promise<UserRecord | null> {
    return toRecord(await this.users.findOne({ _id: id, ...LIVE }).lean<UserDocument>());
  }

  /**
   * Documents written when username_key was the lower-cased name get the skeleton key
   * (domain/username-key.ts). Two older names that turn out to look alike both stay (the later
   * one's key carries its id); new look-alikes of either are refused.
   */
  private async rekeyUsernames(): Promise<void> {
    const documents = await this.users
      .find({}, { _id: 1, username: 1, username_key: 1, username_look: 1, _deleted: 1 })
      .sort({ created_at: 1, _id: 1 })
      .lean<{ _id: string; username: string; username_key: string; username_look?: string; _deleted?: boolean }[]>();
    const settle = async (document: (typeof documents)[number], field: 'username_key' | 'username_look', value: string) => {
      const current = document[field];
      if (current === value || current?.startsWith(`${value}#`)) return;
      try {
        await this.users.updateOne({ _id: document._id }, { $set: { [field]: value } });
      } catch (error) {
        if (!isDuplicateKeyError(error)) throw error;
        await this.users.updateOne({ _id: document._id }, { $set: { [field]: `${value}#${document._id}` } });
      }
    };
    for (const document of documents) {
      if (document._deleted) {
        if (!document.username_look)
          await this.users.updateOne({ _id: document._id }, { $set: { username_look: `deleted:${document._id}` } });
        continue;
      }
      await settle(document, 'username_key', usernameKey(document.username));
      await settle(document, 'username_look', usernameLook(document.username));
    }
  }

  async findByUsername(username: string): Promise<UserRecord | null> {
    // The same name in any case, else a name that looks like it.
    return toRecord(
      (await this.users.findOne({ username_key: usernameKey(username), ...LIVE }).lean<UserDocument>()) ??
        (await this.users.findOne({ username_look: usernameLook(username), ...LIVE }).lean<UserDocument>()),
    );
  }

  async findByEmail(email: string): Promise<UserRecord | null> {
    return toRecord(await this.users.findOne({ email_key: email.toLowerCase(), ...LIVE }).lean<UserDocument>());
  }

  async findByEmails(emails: readonly string[]): Promise<UserRecord[]> {
    const keys = [...new Set(emails.map((email) => email.toLowerCase()))];
    const found: UserRecord[] = [];
    for (let at = 0; at < keys.length; at += ADDRESSES_PER_QUERY) {
      const documents = await this.users
        .find({ email_key: { $in: keys.slice(at, at + ADDRESSES_PER_QUERY) }, ...LIVE })
        .lean<UserDocument[]>();
      for (const document of documents) found.push(toRecord(document)!);
    }
    return found;
  }

  async create(user: UserRecord, events: PendingEvent[]): Promise<void> {
    const { id, ...rest } = user;
    try {
      await this.users.collection.insertOne({
        _id: id,
        ...rest,
        username_key: usernameKey(user.username),
        username_look: usernameLook(user.username),
        email_key: user.email.toLowerCase(),
        _outbox: toEmbedded(events),
        _outboxVersion: 0,
        _deleted: false,
      } as never);
    } catch (error) {
      throw await this.translateDuplicate(error, user.id, user);
    }
  }

  async update(id: string, changes: UserChanges, events: PendingEvent[]): Promise<UserRecord | null> {
    try {
      const updated = await serialWrite(this.users, () =>
        this.users
          .findOneAndUpdate(
            { _id: id, ...LIVE },
            { $set: { ...changes, ...keysOf(changes) }, ...outboxPush(toEmbedded(events)) },
            { new: true },
          )
          .lean<UserDocument>()
          .exec(),
      );
      return toRecord(updated);
    } catch (error) {
      throw await this.translateDuplicate(error, id, changes);
    }
  }

  async delete(id: string, events: PendingEvent[]): Promise<boolean> {
    // A tombstone until its events are out; its unique keys are freed at once.
    const deleted = await serialWrite(this.users, () =>
      this.users
        .findOneAndUpdate(
          { _id: id, ...LIVE },
          {
            $set: { _deleted: true, username_key: `deleted:${id}`, username_look: `deleted:${id}`, email_key: `deleted:${id}` },
            ...outboxPush(toEmbedded(events)),
          },
        )
        .exec(),
    );
    return deleted !== null;
  }

  async appendEvents(events: PendingEvent[]): Promise<void> {
    await this.outbox.appendStandalone(events);
  }

  async list(limit: number, cursor?: string): Promise<UserPage> {
    const after = cursor ? decodeCursor(cursor) : null;
    const filter = after ? { ...LIVE, $or: [{ created_at: { $gt: after[0] } }, { created_at: after[0], _id: { $gt: after[1] } }] } : LIVE;
    const documents = await this.users
      .find(filter)
      .sort({ created_at: 1, _id: 1 })
      .limit(limit + 1)
      .lean<UserDocument[]>();
    const items = documents.slice(0, limit).map((document) => toRecord(document)!);
    const last = items.at(-1);
    return { items, nextCursor: documents.length > limit && last ? encodeCursor([last.created_at, last.id]) : null };
  }

  async countAdmins(): Promise<number> {
    return this.users.countDocuments({ role: { $ne: 1 }, ...LIVE });
  }

  async ping(): Promise<void> {
    await this.connection.db!.admin().ping();
  }

  /** A unique-index violation becomes a DuplicateUserError naming the field that is taken. */
  private async translateDuplicate(error: unknown, ownId: string, attempted: UserChanges): Promise<unknown> {
    if (!isDuplicateKeyError(error)) return error;
    if (attempted.username !== undefined) {
      const holder = await this.users
        .findOne(
          { $or: [{ username_key: usernameKey(attempted.username) }, { username_look: usernameLook(attempted.username) }] },
          { _id: 1 },
        )
        .lean<{ _id: string }>();
      if (holder && holder._id !== ownId) return new DuplicateUserError('username');
    }
    if (attempted.email !== undefined) {
      const holder = await this.users.findOne({ email_key: attempted.email.toLowerCase() }, { _id: 1 }).lean<{ _id: string }>();
      if (holder && holder._id !== ownId) return new DuplicateUserError('email');
    }
    return new DuplicateUserError(attempted.email !== undefined && attempted.username === undefined ? 'email' : 'username');
  }
}
