import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll } from 'vitest';
import { pino } from 'pino';
import { BLOB_INTENTS_TABLE_SQL, FsBlobStore, SqliteBlobIntents, SqliteEventBus, SqliteJobQueue, openDatabase } from '../src/index.js';
import { blobIntentsContract, blobStoreContract, eventBusContract, jobQueueContract, runTypeScript } from '../src/testing/index.js';

const root = mkdtempSync(join(tmpdir(), 'portal-platform-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));

eventBusContract('embedded SQLite log', {
  connect: async () => new SqliteEventBus({ file: join(root, 'bus.sqlite'), logger: pino({ level: 'silent' }), pollIntervalMs: 50 }),
  writeRaw: async (bus, topic, key, value) => (bus as SqliteEventBus).publishRaw(topic, [{ key, value, headers: {} }]),
});

blobStoreContract('files on disk', {
  create: async () => new FsBlobStore(join(root, 'blobs')),
});

const intentsDb = openDatabase(join(root, 'intents.sqlite'), [BLOB_INTENTS_TABLE_SQL]);
afterAll(() => intentsDb.close());
blobIntentsContract('SQLite table', {
  create: async () => new SqliteBlobIntents(intentsDb),
});

jobQueueContract('embedded SQLite table', {
  connect: async (queue) =>
    new SqliteJobQueue<{ n: number }>({ file: join(root, 'jobs.sqlite'), queue, logger: pino({ level: 'silent' }), pollIntervalMs: 50 }),
  startDoomedWorker: async (queue) => {
    const worker = runTypeScript(fileURLToPath(new URL('./fixtures/doomed-sqlite-worker.ts', import.meta.url)), [
      join(root, 'jobs.sqlite'),
      queue,
    ]);
    await worker.waitForLine(/^ready$/);
    return { started: worker.waitForLine(/^started /).then(() => undefined), kill: () => worker.kill() };
  },
});
