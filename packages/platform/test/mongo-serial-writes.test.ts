import mongoose from 'mongoose';
import { afterAll, describe, expect, it } from 'vitest';
import { ConfigError } from '../src/config/env.js';
import { describeInfrastructure, infrastructureFromEnv } from '../src/runtime/infrastructure.js';
import { decideSerialWrites, serialWrite, serialWritesOf, serverNeedsSerialWrites, useSerialWrites } from '../src/mongo/serial-writes.js';

// What each server answers to buildInfo (the fields that matter; FerretDB's and mongo-java-server's
// as the local servers answer, MongoDB's as a 7.0 server does).
const FERRETDB_V1 = {
  version: '7.0.42',
  gitVersion: 'unknown',
  modules: [],
  sysInfo: 'deprecated',
  versionArray: [7, 0, 42, 0],
  bits: 64,
  debug: false,
  maxBsonObjectSize: 16777216,
  buildEnvironment: {},
  ferretdbVersion: 'unknown',
  ferretdbFeatures: { aggregationStages: ['$match'] },
  ok: 1,
};
const FERRETDB_V2 = { version: '7.0.77', gitVersion: '6ed0bd1ec6ae3ab1f2ab7ae8db8e8ab52a3de3aa', ferretdbVersion: 'v2.1.0', ok: 1 };
const MONGO_JAVA_SERVER = { version: '5.0.0', versionArray: [5, 0, 0], maxBsonObjectSize: 16777216, ok: 1 };
const MONGODB = {
  version: '7.0.14',
  gitVersion: 'ce59cfc6a3c5e5c067dca0d30697edd68d4f5188',
  modules: [],
  allocator: 'tcmalloc',
  javascriptEngine: 'mozjs',
  versionArray: [7, 0, 14, 0],
  storageEngines: ['devnull', 'inMemory', 'wiredTiger'],
  bits: 64,
  maxBsonObjectSize: 16777216,
  ok: 1,
};

describe('MongoDB serial writes: which server needs the queue', () => {
  it('queues on FerretDB, whatever its version, and not on MongoDB or mongo-java-server', () => {
    expect(serverNeedsSerialWrites(FERRETDB_V1)).toMatchObject({ on: true, reason: expect.stringContaining('FerretDB unknown') });
    expect(serverNeedsSerialWrites(FERRETDB_V2)).toMatchObject({ on: true, reason: expect.stringContaining('FerretDB v2.1.0') });
    expect(serverNeedsSerialWrites(MONGODB)).toEqual({ on: false, reason: 'server 7.0.14 applies each update atomically' });
    expect(serverNeedsSerialWrites(MONGO_JAVA_SERVER)).toEqual({ on: false, reason: 'server 5.0.0 applies each update atomically' });
  });

  it('asks the server only when the setting is auto, and queues when it cannot ask', async () => {
    // Never opened: asking it throws, which must not turn the queue off.
    const unopened = mongoose.createConnection();
    expect(await decideSerialWrites(unopened, 'on')).toEqual({ on: true, reason: 'MONGO_SERIAL_WRITES=on' });
    expect(await decideSerialWrites(unopened, 'off')).toEqual({ on: false, reason: 'MONGO_SERIAL_WRITES=off' });
    expect(await decideSerialWrites(unopened, 'auto')).toMatchObject({
      on: true,
      reason: expect.stringMatching(/^buildInfo failed .*queued to be safe$/),
    });
    expect(serialWritesOf(unopened)).toMatchObject({ on: true });
  });
});

describe('MongoDB serial writes: the setting', () => {
  it('is MONGO_SERIAL_WRITES, auto by default, on or off, named in the infrastructure log line', () => {
    const base = { DATA_DIR: '/tmp/unused', MONGO_URL: 'mongodb://127.0.0.1:1' };
    expect(infrastructureFromEnv(base).mongoSerialWrites).toBe('auto');
    expect(infrastructureFromEnv({ ...base, MONGO_SERIAL_WRITES: 'on' }).mongoSerialWrites).toBe('on');
    expect(infrastructureFromEnv({ ...base, MONGO_SERIAL_WRITES: 'off' }).mongoSerialWrites).toBe('off');
    expect(describeInfrastructure(infrastructureFromEnv({ ...base, MONGO_SERIAL_WRITES: 'off' })).documents).toBe(
      'mongodb (serial writes: off)',
    );
  });

  it('refuses anything else, naming the variable', () => {
    expect(() => infrastructureFromEnv({ DATA_DIR: '/tmp/unused', MONGO_SERIAL_WRITES: 'yes' })).toThrow(ConfigError);
    expect(() => infrastructureFromEnv({ DATA_DIR: '/tmp/unused', MONGO_SERIAL_WRITES: 'yes' })).toThrow(/MONGO_SERIAL_WRITES/);
  });
});

describe('MongoDB serial writes: the queue', () => {
  const connections = [mongoose.createConnection(), mongoose.createConnection()];
  afterAll(async () => {
    for (const connection of connections) await connection.close();
  });

  /** N writes started at once on a model of the connection: the most that were running together. */
  async function mostAtOnce(on: boolean, n: number): Promise<{ most: number; results: number[] }> {
    const connection = connections[on ? 0 : 1]!;
    useSerialWrites(connection, { on, reason: 'test' });
    const model = connection.models.Item ?? connection.model('Item', new mongoose.Schema({ _id: String }));
    const raw = connection.collection('raw');
    let running = 0;
    let most = 0;
    const write = (i: number) => async () => {
      running++;
      most = Math.max(most, running);
      await new Promise((resolve) => setImmediate(resolve));
      running--;
      if (i === 3) throw new Error('a failed write');
      return i;
    };
    const settled = await Promise.allSettled(Array.from({ length: n }, (_, i) => serialWrite(i % 2 ? model : raw, write(i))));
    return { most, results: settled.flatMap((outcome) => (outcome.status === 'fulfilled' ? [outcome.value] : [])) };
  }

  it('runs the writes of one collection one at a time when on, and a failed one does not stop the next', async () => {
    const { most, results } = await mostAtOnce(true, 10);
    expect(most).toBe(2); // one per collection: the model and the raw collection
    expect(results).toEqual([0, 1, 2, 4, 5, 6, 7, 8, 9]);
  });

  it('lets them all run at once when off', async () => {
    const { most, results } = await mostAtOnce(false, 10);
    expect(most).toBe(10);
    expect(results).toEqual([0, 1, 2, 4, 5, 6, 7, 8, 9]);
  });
});
