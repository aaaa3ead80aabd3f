import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll } from 'vitest';
import { pino } from 'pino';
import { FsBlobStore, SqliteEventBus } from '../src/index.js';
import { blobStoreContract, eventBusContract } from '../src/testing/index.js';

const root = mkdtempSync(join(tmpdir(), 'portal-platform-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));

eventBusContract('embedded SQLite log', {
  connect: async () => new SqliteEventBus({ file: join(root, 'bus.sqlite'), logger: pino({ level: 'silent' }), pollIntervalMs: 50 }),
});

blobStoreContract('files on disk', {
  create: async () => new FsBlobStore(join(root, 'blobs')),
});
