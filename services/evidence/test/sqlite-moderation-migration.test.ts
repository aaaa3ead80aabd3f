import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, expect, it } from 'vitest';
import { openDatabase } from '@portal/platform';
import { EVIDENCE_MIGRATIONS } from '../src/repositories/sqlite/migrations.js';
import { SqliteEvidenceRepository } from '../src/repositories/sqlite/sqlite-evidence-repository.js';
import { searchWords } from '../src/domain/search-words.js';
import { sampleEvidence } from './contracts/evidence-store-contracts.js';

const dir = mkdtempSync(join(tmpdir(), 'evidence-migration-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

it('gives items stored before the review queue a review state and makes them searchable', async () => {
  const file = join(dir, 'evidence.sqlite');
  // A database as the release before moderation left it (its first two migrations).
  const before = openDatabase(file, EVIDENCE_MIGRATIONS.slice(0, 2));
  const published = sampleEvidence({ title: 'Published lantern', is_public: true });
  const waiting = sampleEvidence({ title: 'Private drum', notes: 'heard at night', is_public: false });
  const insert = before.prepare(
    `INSERT INTO evidence (id, user_id, username, title, notes, media_type, is_public, date_posted, updated_at, media_status, media_revision)
     VALUES (@id, @user_id, @username, @title, @notes, @media_type, @is_public, @date_posted, @updated_at, @media_status, @media_revision)`,
  );
  for (const item of [published, waiting]) {
    const { review_status: _review, ...row } = item;
    insert.run({ ...row, is_public: item.is_public ? 1 : 0 });
  }
  before.close();

  const after = openDatabase(file, EVIDENCE_MIGRATIONS);
  const repo = new SqliteEvidenceRepository(after);
  expect(await repo.findById(published.id)).toMatchObject({ review_status: 'reviewed', is_public: true });
  expect(await repo.findById(waiting.id)).toMatchObject({ review_status: 'new', is_public: false });
  expect((await repo.list({ reviewStatus: 'new' }, 10)).items.map((item) => item.id)).toEqual([waiting.id]);
  expect((await repo.list({ words: searchWords('night') }, 10)).items.map((item) => item.id)).toEqual([waiting.id]);
  expect((await repo.list({ words: searchWords('lantern') }, 10)).items.map((item) => item.id)).toEqual([published.id]);
  expect(await repo.counts()).toEqual({ new: 1, public: 1, private: 1, total: 2 });
  // A deleted item's words leave the index at once (FTS5 secure-delete), and it is not found.
  expect(after.prepare(`SELECT v FROM evidence_search_config WHERE k = 'secure-delete'`).get()).toEqual({ v: 1 });
  await repo.delete(waiting.id, []);
  expect((await repo.list({ words: searchWords('night') }, 10)).items).toEqual([]);
  expect(after.prepare('SELECT count(*) AS n FROM evidence_search_docs').get()).toEqual({ n: 1 });
  after.close();
});
