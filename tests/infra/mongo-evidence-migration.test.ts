import { randomUUID } from 'node:crypto';
import type { Connection } from 'mongoose';
import { afterAll, describe, expect, it } from 'vitest';
import { connectMongo } from '@portal/platform';
import { MongoEvidenceRepository } from '../../services/evidence/src/repositories/mongo/mongo-evidence-repository.js';
import { searchWords } from '../../services/evidence/src/domain/search-words.js';
import { sampleEvidence } from '../../services/evidence/test/contracts/evidence-store-contracts.js';
import { infraServers, stopContainers } from '../support/infra-servers.js';

const servers = await infraServers();
const connections: Connection[] = [];
afterAll(async () => {
  for (const connection of connections) await connection.close();
  await stopContainers();
});

describe.skipIf(!servers.mongoUrl)('MongoDB evidence written before moderation (review state, search words)', () => {
  it('gets its review state and its words at start, and is then found and counted', async () => {
    const connection = await connectMongo(servers.mongoUrl!, `migration_evidence_${randomUUID().slice(0, 8)}`);
    connections.push(connection);
    // Documents as the release before moderation wrote them: no review_status, no search_terms.
    const published = sampleEvidence({ title: 'Published lantern', is_public: true });
    const waiting = sampleEvidence({ title: 'Private drum', notes: 'heard at night' });
    for (const item of [published, waiting]) {
      const { id, review_status: _review, ...rest } = item;
      await connection
        .db!.collection('evidence')
        .insertOne({ _id: id, ...rest, upload_id: null, upload_size: null, _outbox: [], _outboxVersion: 0, _deleted: false } as never);
    }
    const repo = new MongoEvidenceRepository(connection);
    expect((await repo.findById(waiting.id))?.review_status).toBe('new');
    await repo.ensureIndexes();
    expect(await repo.findById(published.id)).toMatchObject({ review_status: 'reviewed', is_public: true });
    expect(await repo.findById(waiting.id)).toMatchObject({ review_status: 'new', is_public: false });
    expect((await repo.list({ reviewStatus: 'new' }, 10)).items.map((item) => item.id)).toEqual([waiting.id]);
    expect((await repo.list({ words: searchWords('night') }, 10)).items.map((item) => item.id)).toEqual([waiting.id]);
    expect((await repo.list({ words: searchWords('lantern') }, 10)).items.map((item) => item.id)).toEqual([published.id]);
    expect(await repo.counts()).toEqual({ new: 1, public: 1, private: 1, total: 2 });
    await connection.db!.dropDatabase();
  });
});
