import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LEGACY_MEDIA_QUEUE, MEDIA_RESULTS_QUEUE, TRANSCODE_MEDIA_QUEUE } from '@portal/contracts';
import { waitFor } from '@portal/platform/testing';
import { ApiClient } from '../support/api-client.js';
import { newParticipant } from '../support/accounts.js';
import { uploadEvidence, waitForMedia } from '../support/evidence.js';
import { makeMediaFixtures, type MediaFixtures } from '../support/media-fixtures.js';
import { NO_FACE_CHECK, startTestPortal } from '../support/portal.js';

let scratch: string;
let fixtures: MediaFixtures;
beforeAll(async () => {
  scratch = mkdtempSync(join(tmpdir(), 'queue-upgrade-'));
  fixtures = await makeMediaFixtures(join(scratch, 'fixtures'));
}, 120_000);
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

// The media jobs themselves: the outbox of their results (a queue of its own) is not one of them.
const queuedJobs = (dataDir: string) => {
  const db = new Database(join(dataDir, 'jobs.sqlite'), { readonly: true });
  try {
    return db
      .prepare(`SELECT queue, id, state FROM jobs WHERE queue LIKE 'media%' AND queue != ? ORDER BY id`)
      .all(MEDIA_RESULTS_QUEUE) as {
      queue: string;
      id: string;
      state: string;
    }[];
  } finally {
    db.close();
  }
};

// The embedded queue's rows are read and written here; the distributed mode's BullMQ queues are
// covered by the media worker's queue tests and the job queue contract.
describe.skipIf(process.env.PORTAL_TEST_MODE === 'distributed')('media jobs queued before the queues were split', () => {
  it('are processed after the upgrade, once, with no second job queued for them', async () => {
    const dataDir = join(scratch, 'data');
    // Items uploaded while no media worker runs: their jobs wait...
    const first = await startTestPortal({ ...NO_FACE_CHECK, MEDIA_WORKER_ENABLED: 'false' }, dataDir);
    const { client } = await newParticipant(first.url);
    const ids: string[] = [];
    for (const file of [fixtures.jpegWithGps, fixtures.phoneMp4]) {
      const response = await uploadEvidence(client, file, { title: 'Queued before the upgrade' });
      expect(response.status).toBe(201);
      ids.push(response.data.id);
    }
    await first.stop();
    expect(
      queuedJobs(dataDir)
        .map((job) => job.queue)
        .sort(),
    ).toEqual(['media-av', 'media-stills']);
    // ...in the single queue the release before the split put every media job in.
    const db = new Database(join(dataDir, 'jobs.sqlite'));
    db.prepare(`UPDATE jobs SET queue = ? WHERE queue LIKE 'media-%'`).run(LEGACY_MEDIA_QUEUE);
    db.close();

    const upgraded = await startTestPortal(NO_FACE_CHECK, dataDir);
    try {
      const again = new ApiClient(upgraded.url);
      for (const [name, value] of client.cookies) again.cookies.set(name, value);
      for (const id of ids) expect((await waitForMedia(again, id, 90_000)).media_status, id).toBe('ready');
      // Done from the old queue; reconciling at start found them there and queued nothing new.
      // (The result is applied as soon as it is published, a moment before the job is marked done.)
      // The video (a phone's H.264/AAC) was ready with a remux of its streams; its 720p copy is the
      // second job that one added, to the queue of 720p copies.
      await waitFor(() => queuedJobs(dataDir).length === 3 && queuedJobs(dataDir).every((job) => job.state === 'completed'), {
        timeoutMs: 90_000,
        what: 'the jobs to be marked done',
      });
      expect(queuedJobs(dataDir)).toEqual(
        [
          ...ids.map((id) => ({ queue: LEGACY_MEDIA_QUEUE, id: `${id}.r1`, state: 'completed' })),
          { queue: TRANSCODE_MEDIA_QUEUE, id: `${ids[1]}.r1.720p`, state: 'completed' },
        ].sort((a, b) => a.id.localeCompare(b.id)),
      );
    } finally {
      await upgraded.dispose();
    }
  }, 240_000);
});
