import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll } from 'vitest';
import { openDatabase } from '@portal/platform';
import { blobIntentsContract } from '@portal/platform/testing';
import { EVIDENCE_MIGRATIONS } from '../src/repositories/sqlite/migrations.js';
import { SqliteEvidenceRepository } from '../src/repositories/sqlite/sqlite-evidence-repository.js';
import { SqliteAuthorDirectory } from '../src/repositories/sqlite/sqlite-author-directory.js';
import { authorDirectoryContract, evidenceRepositoryContract } from './contracts/evidence-store-contracts.js';

const dir = mkdtempSync(join(tmpdir(), 'evidence-stores-'));
const db = openDatabase(join(dir, 'evidence.sqlite'), EVIDENCE_MIGRATIONS);
afterAll(() => {
  db.close();
  rmSync(dir, { recursive: true, force: true });
});

evidenceRepositoryContract('SQLite', async () => new SqliteEvidenceRepository(db));
authorDirectoryContract('SQLite', async () => new SqliteAuthorDirectory(db));
// The evidence database's own table (its migration), through the shared adapter.
blobIntentsContract('evidence SQLite', { create: async () => new SqliteEvidenceRepository(db).blobIntents });
