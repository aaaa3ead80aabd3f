import mongoose, { type Connection } from 'mongoose';

/**
 * A connection to one service's database (a database per service), with indexes built by the
 * caller. autoIndex is off: indexes are created once, explicitly, at start.
 */
export async function connectMongo(url: string, database: string): Promise<Connection> {
  const connection = mongoose.createConnection(url, {
    dbName: database,
    autoIndex: false,
    serverSelectionTimeoutMS: 10_000,
    maxPoolSize: 20,
  });
  await connection.asPromise();
  return connection;
}
