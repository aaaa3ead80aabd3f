import mongoose, { type Connection } from 'mongoose';
import { decideSerialWrites, useSerialWrites, type SerialWritesSetting } from './serial-writes.js';

export interface ConnectMongoOptions {
  /** MONGO_SERIAL_WRITES: whether updates of one collection queue (see serial-writes.ts); default auto. */
  serialWrites?: SerialWritesSetting;
  /** Options for the driver beyond the defaults here (tests: monitorCommands). */
  driver?: mongoose.ConnectOptions;
}

/**
 * A connection to one service's database (a database per service), with indexes built by the
 * caller. autoIndex is off: indexes are created once, explicitly, at start. Whether its updates
 * go through serialWrite's queue is decided here, once (serialWritesOf tells).
 */
export async function connectMongo(url: string, database: string, options: ConnectMongoOptions = {}): Promise<Connection> {
  const connection = mongoose.createConnection(url, {
    dbName: database,
    autoIndex: false,
    serverSelectionTimeoutMS: 10_000,
    maxPoolSize: 20,
    ...options.driver,
  });
  await connection.asPromise();
  useSerialWrites(connection, await decideSerialWrites(connection, options.serialWrites ?? 'auto'));
  return connection;
}
