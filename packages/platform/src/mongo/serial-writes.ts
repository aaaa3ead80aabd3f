import type { Collection, Connection, Model } from 'mongoose';

/**
 * Updates of one collection from this process, one at a time – only where the server needs it.
 *
 * MongoDB applies a single-document update atomically, and the transactional outbox relies on
 * that: the relay takes published events out of an aggregate's `_outbox` while requests change
 * the same document. FerretDB v1 (the MongoDB-wire server the CI starts) does not: it reads the
 * matching documents, applies the update in its own process and writes whole documents back, so
 * two updates of one document that overlap can lose one of them (seen: a participant's
 * `video_watched` reverted by the relay's concurrent clean-up of the registration event; twenty
 * concurrent `$inc` of one field leave it at 1 to 12). Updates that go through here never overlap
 * within a process on such a server, which closes that gap for one replica of a service; several
 * replicas against FerretDB could still overlap, which is one reason the operations guide asks for
 * real MongoDB in production. Inserts need no queue (a new document has no concurrent writer) and
 * reads never wait.
 *
 * On a server that applies each update atomically (MongoDB, mongo-java-server) the queue would
 * only cap a process at one update round trip at a time, so it is off there: MONGO_SERIAL_WRITES
 * `auto` (the default) asks the server at connection (see serverNeedsSerialWrites), `on` and `off`
 * decide without asking. What stays correct without the queue is the adapters' own business:
 * every update is one atomic operator write, or a write guarded by what it read (see
 * MongoEvidenceRepository.update and setVisibility, MongoOutboxStore.removeEvents), which also
 * holds across replicas.
 */
export type SerialWritesSetting = 'auto' | 'on' | 'off';

export const SERIAL_WRITES_SETTINGS = ['auto', 'on', 'off'] as const satisfies readonly SerialWritesSetting[];

/** Whether serialWrite queues, and why (for the start-up log line). */
export interface SerialWritesDecision {
  on: boolean;
  reason: string;
}

/**
 * What the server's `buildInfo` answer says about its updates. FerretDB names itself there
 * (`ferretdbVersion`, v1 and v2 alike; the local build answers "unknown"): queue, whatever its
 * version, since being wrong costs lost updates and being careful only throughput. MongoDB and
 * mongo-java-server (whose in-memory collections apply each update under a lock) do not.
 */
export function serverNeedsSerialWrites(buildInfo: Record<string, unknown>): SerialWritesDecision {
  if ('ferretdbVersion' in buildInfo) {
    return { on: true, reason: `FerretDB ${String(buildInfo.ferretdbVersion)} applies updates as read-modify-write` };
  }
  return { on: false, reason: `server ${String(buildInfo.version ?? 'of unknown version')} applies each update atomically` };
}

/** The setting decides, or (auto) the server's buildInfo; a server that does not answer gets the queue. */
export async function decideSerialWrites(connection: Connection, setting: SerialWritesSetting): Promise<SerialWritesDecision> {
  if (setting !== 'auto') return { on: setting === 'on', reason: `MONGO_SERIAL_WRITES=${setting}` };
  try {
    const buildInfo = (await connection.db!.admin().command({ buildInfo: 1 })) as Record<string, unknown>;
    return serverNeedsSerialWrites(buildInfo);
  } catch (error) {
    return { on: true, reason: `buildInfo failed (${(error as Error).message}): queued to be safe` };
  }
}

const decisions = new WeakMap<Connection, SerialWritesDecision>();

/** Records what serialWrite does for the collections of this connection (connectMongo does it). */
export function useSerialWrites(connection: Connection, decision: SerialWritesDecision): void {
  decisions.set(connection, decision);
}

/** What serialWrite does on this connection: queue unless told otherwise. */
export function serialWritesOf(connection: Connection): SerialWritesDecision {
  return decisions.get(connection) ?? { on: true, reason: 'connection not opened by connectMongo: queued to be safe' };
}

/** A mongoose model, or a collection from connection.collection(). */
export type WritableCollection = Model<any> | Collection<any>;

function connectionOf(collection: WritableCollection): Connection {
  return 'conn' in collection ? collection.conn : collection.db;
}

const queues = new WeakMap<object, Promise<unknown>>();

export function serialWrite<T>(collection: WritableCollection, write: () => Promise<T>): Promise<T> {
  if (!serialWritesOf(connectionOf(collection)).on) return write();
  const previous = queues.get(collection) ?? Promise.resolve();
  const run = previous.then(write);
  queues.set(
    collection,
    run.catch(() => undefined),
  );
  return run;
}
