import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pino } from 'pino';
import { afterAll, describe, expect, it } from 'vitest';
import { MEDIA_TYPES, mediaQueueList, openMediaQueues, type MediaJob } from '@portal/contracts';
import { FsBlobStore, SqliteJobQueue, mediaCapsFromEnv, openDatabase } from '@portal/platform';
import { waitFor } from '@portal/platform/testing';
import { EvidenceService, INTERRUPTED_TOO_OFTEN, jobIdFor } from '../src/domain/evidence-service.js';
import { EVIDENCE_MIGRATIONS } from '../src/repositories/sqlite/migrations.js';
import { SqliteAuthorDirectory } from '../src/repositories/sqlite/sqlite-author-directory.js';
import { SqliteEvidenceRepository } from '../src/repositories/sqlite/sqlite-evidence-repository.js';
import { sampleEvidence } from './contracts/evidence-store-contracts.js';

// A video longer than every media worker's shutdown grace period, while the autoscaler keeps
// scaling the workers down: each worker that takes the job is stopped and hands it back. The
// first hand-backs are free; each one after uses a try (the evidence service gives a job 3), so
// the item ends failed with a media_error that says why, instead of being transcoded from zero
// for ever.
const dir = mkdtempSync(join(tmpdir(), 'interrupted-media-'));
const db = openDatabase(join(dir, 'evidence.sqlite'), EVIDENCE_MIGRATIONS);
const logger = pino({ level: 'silent' });
const mediaQueues = openMediaQueues(
  (queue) => new SqliteJobQueue<MediaJob>({ file: join(dir, 'jobs.sqlite'), queue, logger, pollIntervalMs: 50 }),
);
afterAll(async () => {
  for (const queue of mediaQueueList(mediaQueues)) await queue.close();
  db.close();
  rmSync(dir, { recursive: true, force: true });
});

const repository = new SqliteEvidenceRepository(db);
const service = new EvidenceService({
  evidence: repository,
  authors: new SqliteAuthorDirectory(db),
  blobs: new FsBlobStore(join(dir, 'blobs')),
  mediaQueues,
  limits: { image: 1e6, video: 1e6, audio: 1e6 },
  caps: mediaCapsFromEnv({}),
  logger,
  onEventsCommitted: () => undefined,
});

describe('a media job that every worker is stopped in the middle of', () => {
  it('ends failed after its free hand-backs and its tries, and the item says it was interrupted too many times', async () => {
    const item = sampleEvidence({
      media_type: MEDIA_TYPES.video,
      media_status: 'processing',
      media_revision: 1,
      original_key: 'evidence/x/r1/original',
    });
    await repository.create(item, []);
    await service.reconcile(); // queues the item's job
    const jobId = jobIdFor(item.id, 1);
    expect((await mediaQueues.av.getJob(jobId))?.state).toBe('waiting');

    const freeHandBacks = 2;
    let handBacks = 0;
    while ((await mediaQueues.av.getJob(jobId))?.state !== 'failed') {
      expect(handBacks, 'the job is still handed back after every try should have been used').toBeLessThan(freeHandBacks + 3);
      const worker = await mediaQueues.av.work(() => new Promise(() => undefined), { freeHandBacks });
      await waitFor(async () => (await mediaQueues.av.getJob(jobId))?.state === 'active', { timeoutMs: 5000, what: 'the job to start' });
      expect(await worker.handBack()).toEqual([jobId]);
      handBacks++;
      // Still processing in between: the next worker starts it again.
      await service.reconcile();
      if ((await mediaQueues.av.getJob(jobId))?.state !== 'failed')
        expect((await repository.findById(item.id))?.media_status).toBe('processing');
    }
    expect(handBacks).toBe(freeHandBacks + 3);
    expect(await mediaQueues.av.getJob(jobId)).toMatchObject({ state: 'failed', attemptsMade: 3 });

    await service.reconcile();
    const failed = await repository.findById(item.id);
    expect(failed).toMatchObject({ media_status: 'failed', media_error: INTERRUPTED_TOO_OFTEN });
    expect(failed!.media_error).toMatch(/interrupted too many times/);
  });
});
