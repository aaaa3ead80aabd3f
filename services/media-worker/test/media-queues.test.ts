import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import { pino } from 'pino';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import {
  LEGACY_MEDIA_QUEUE,
  MEDIA_TYPES,
  mediaQueueKindFor,
  mediaQueueList,
  openMediaQueues,
  type MediaJob,
  type MediaQueueSet,
  type MediaType,
} from '@portal/contracts';
import {
  ConfigError,
  DEFAULT_FREE_HAND_BACKS,
  SqliteJobQueue,
  isHandedBackTooOften,
  type ActiveJob,
  type JobQueue,
  type JobWorker,
} from '@portal/platform';
import { waitFor } from '@portal/platform/testing';
import { mediaWorkerSettingsFromEnv } from '../src/config.js';
import { workMediaQueues } from '../src/media-queue-workers.js';

// The media queues on real SQLite job tables, with handlers that take a known time: a video 2 s,
// a photo 50 ms. What matters here is who waits for whom, not what ffmpeg does (bench/queues
// measures that with real transcodes).
const VIDEO_MS = 2000;
const PHOTO_MS = 50;

const root = mkdtempSync(join(tmpdir(), 'media-queues-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));
const logger = pino({ level: 'silent' });
let files = 0;
const open: JobQueue<MediaJob>[] = [];
const running: JobWorker[] = [];
afterEach(async () => {
  for (const worker of running.splice(0)) await worker.close();
  for (const queue of open.splice(0)) await queue.close();
});

function queuesInNewStore(): { file: string; queues: MediaQueueSet<JobQueue<MediaJob>> } {
  const file = join(root, `jobs-${++files}.sqlite`);
  const queues = openMediaQueues((queue) => new SqliteJobQueue<MediaJob>({ file, queue, logger, pollIntervalMs: 50 }));
  open.push(...mediaQueueList(queues));
  return { file, queues };
}

const job = (id: string, media_type: MediaType): MediaJob => ({
  evidenceId: id,
  revision: 1,
  media_type,
  originalKey: `evidence/${id}/r1/original`,
  outputPrefix: `evidence/${id}/r1/`,
});

/** Records when each job finished; a video takes VIDEO_MS, anything else PHOTO_MS. */
function timedHandler(finished: Map<string, number>) {
  return async (active: ActiveJob<MediaJob>) => {
    await delay(active.data.media_type === MEDIA_TYPES.image ? PHOTO_MS : VIDEO_MS);
    finished.set(active.data.evidenceId, Date.now());
    return { evidenceId: active.data.evidenceId };
  };
}

describe('media queues: a photo waits only for other photos', () => {
  it('before the split: in one shared queue worked one at a time, a photo posted after two videos waits for both', async () => {
    const shared = new SqliteJobQueue<MediaJob>({
      file: join(root, `jobs-${++files}.sqlite`),
      queue: LEGACY_MEDIA_QUEUE,
      logger,
      pollIntervalMs: 50,
    });
    open.push(shared);
    const finished = new Map<string, number>();
    running.push(await shared.work(timedHandler(finished), { concurrency: 1 }));
    await shared.add('process-media', job('video-1', MEDIA_TYPES.video), { jobId: 'video-1' });
    await shared.add('process-media', job('video-2', MEDIA_TYPES.video), { jobId: 'video-2' });
    const posted = Date.now();
    await shared.add('process-media', job('photo', MEDIA_TYPES.image), { jobId: 'photo' });
    await waitFor(() => finished.has('photo'), { timeoutMs: 4 * VIDEO_MS + 5000, what: 'the photo' });
    expect(finished.get('photo')!).toBeGreaterThan(finished.get('video-2')!);
    expect(finished.get('photo')! - posted).toBeGreaterThanOrEqual(2 * VIDEO_MS - 300);
  });

  it('after: with the default settings, a photo posted after two videos is done while the first video is still in work', async () => {
    const { queues } = queuesInNewStore();
    const settings = mediaWorkerSettingsFromEnv({});
    const finished = new Map<string, number>();
    running.push(await workMediaQueues(queues, settings, () => timedHandler(finished)));
    // Enqueued as the evidence service does: by media type.
    const enqueue = (id: string, mediaType: MediaType) =>
      queues[mediaQueueKindFor(mediaType)].add('process-media', job(id, mediaType), { jobId: id });
    await enqueue('video-1', MEDIA_TYPES.video);
    await enqueue('video-2', MEDIA_TYPES.video);
    await waitFor(async () => (await queues.av.counts()).active === 1, { timeoutMs: 5000, what: 'the first video to start' });
    const posted = Date.now();
    await enqueue('photo', MEDIA_TYPES.image);
    await waitFor(() => finished.has('photo'), { timeoutMs: 4 * VIDEO_MS + 5000, what: 'the photo' });
    expect(finished.get('photo')! - posted).toBeLessThan(VIDEO_MS / 2);
    expect(finished.has('video-1')).toBe(false);
    expect(await queues.av.counts()).toMatchObject({ active: 1, waiting: 1 });
    // The videos are not slowed: one at a time, as before.
    await waitFor(() => finished.has('video-2'), { timeoutMs: 4 * VIDEO_MS + 5000, what: 'the videos' });
    expect(finished.get('video-2')! - finished.get('video-1')!).toBeGreaterThanOrEqual(VIDEO_MS - 100);
  });

  it('photos run side by side up to the stills concurrency, and audio goes to the audio/video queue', async () => {
    const { queues } = queuesInNewStore();
    expect(mediaQueueKindFor(MEDIA_TYPES.audio)).toBe('av');
    const settings = mediaWorkerSettingsFromEnv({ MEDIA_STILLS_CONCURRENCY: '3' });
    let inWork = 0;
    let most = 0;
    running.push(
      await workMediaQueues(queues, settings, () => async () => {
        inWork++;
        most = Math.max(most, inWork);
        await delay(200);
        inWork--;
      }),
    );
    for (let i = 0; i < 6; i++) await queues.stills.add('process-media', job(`photo-${i}`, MEDIA_TYPES.image));
    await waitFor(async () => (await queues.stills.counts()).completed === 6, { timeoutMs: 10_000, what: 'six photos' });
    expect(most).toBe(3);
  });

  it('a worker takes only the queues MEDIA_QUEUES names: separate still and audio/video workers', async () => {
    const { file, queues } = queuesInNewStore();
    // Two workers as two Deployments would run them, each with its own clients of the store.
    const stillsSide = openMediaQueues((queue) => new SqliteJobQueue<MediaJob>({ file, queue, logger, pollIntervalMs: 50 }));
    open.push(...mediaQueueList(stillsSide));
    const seenByStills: string[] = [];
    running.push(
      await workMediaQueues(
        stillsSide,
        mediaWorkerSettingsFromEnv({ MEDIA_QUEUES: 'stills' }),
        () => async (active) => void seenByStills.push(active.data.evidenceId),
      ),
    );
    await queues.av.add('process-media', job('video', MEDIA_TYPES.video), { jobId: 'video' });
    await queues.legacy.add('process-media', job('old', MEDIA_TYPES.video), { jobId: 'old' });
    await queues.stills.add('process-media', job('photo', MEDIA_TYPES.image), { jobId: 'photo' });
    await waitFor(async () => (await queues.stills.getJob('photo'))?.state === 'completed', { timeoutMs: 5000, what: 'the photo' });
    await delay(300);
    expect(seenByStills).toEqual(['photo']);
    expect((await queues.av.getJob('video'))!.state).toBe('waiting');
    expect((await queues.legacy.getJob('old'))!.state).toBe('waiting');

    const seenByAv: string[] = [];
    running.push(
      await workMediaQueues(
        queues,
        mediaWorkerSettingsFromEnv({ MEDIA_QUEUES: ' av ' }),
        () => async (active) => void seenByAv.push(active.data.evidenceId),
      ),
    );
    await waitFor(() => seenByAv.length === 2, { timeoutMs: 5000, what: 'the audio/video worker' });
    expect(seenByAv.sort()).toEqual(['old', 'video']);
  });

  it('after an upgrade, jobs queued under the old single queue name are still processed, photos and videos alike', async () => {
    const { file } = queuesInNewStore();
    // Queued by the release before the split, which had one queue for every media job.
    const before = new SqliteJobQueue<MediaJob>({ file, queue: LEGACY_MEDIA_QUEUE, logger });
    await before.add('process-media', job('old-photo', MEDIA_TYPES.image), { jobId: 'old-photo' });
    await before.add('process-media', job('old-video', MEDIA_TYPES.video), { jobId: 'old-video' });
    await before.close();

    const upgraded = openMediaQueues((queue) => new SqliteJobQueue<MediaJob>({ file, queue, logger, pollIntervalMs: 50 }));
    open.push(...mediaQueueList(upgraded));
    const finished = new Map<string, number>();
    running.push(await workMediaQueues(upgraded, mediaWorkerSettingsFromEnv({}), () => timedHandler(finished)));
    await waitFor(() => finished.size === 2, { timeoutMs: 4 * VIDEO_MS + 5000, what: 'the jobs from before the upgrade' });
    expect((await upgraded.legacy.getJob('old-photo'))!.state).toBe('completed');
    expect((await upgraded.legacy.getJob('old-video'))!.state).toBe('completed');
  });

  it("hands every queue's running jobs back at a shutdown's end, whichever queue they came from", async () => {
    const { queues } = queuesInNewStore();
    let started = 0;
    const worker = await workMediaQueues(queues, mediaWorkerSettingsFromEnv({}), () => async () => {
      started++;
      await new Promise(() => undefined); // a transcode that outlasts the grace period
    });
    await queues.stills.add('process-media', job('photo', MEDIA_TYPES.image), { jobId: 'photo' });
    await queues.av.add('process-media', job('video', MEDIA_TYPES.video), { jobId: 'video' });
    await queues.legacy.add('process-media', job('old', MEDIA_TYPES.video), { jobId: 'old' });
    await waitFor(() => started === 3, { timeoutMs: 5000, what: 'a job of each queue to start' });
    expect((await worker.handBack()).sort()).toEqual(['old', 'photo', 'video']);
    for (const [queue, id] of [
      [queues.stills, 'photo'],
      [queues.av, 'video'],
      [queues.legacy, 'old'],
    ] as const) {
      expect(await queue.getJob(id), id).toMatchObject({ state: 'waiting', attemptsMade: 0 });
    }
  });

  it('fails a job that every shutdown interrupts once its tries are used up, with the hand-back reason (MEDIA_FREE_HAND_BACKS)', async () => {
    const { queues } = queuesInNewStore();
    await queues.av.add('process-media', job('endless', MEDIA_TYPES.video), {
      jobId: 'endless',
      attempts: 2,
      backoff: { type: 'fixed', delay: 10 },
    });
    const settings = mediaWorkerSettingsFromEnv({ MEDIA_QUEUES: 'av', MEDIA_FREE_HAND_BACKS: '1' });
    expect(settings.freeHandBacks).toBe(1);
    // One free hand-back, then two counted ones use up the two tries.
    for (let handBack = 1; handBack <= 3; handBack++) {
      const worker = await workMediaQueues(queues, settings, () => () => new Promise(() => undefined));
      await waitFor(async () => (await queues.av.getJob('endless'))?.state === 'active', {
        timeoutMs: 5000,
        what: `the video to start (${handBack})`,
      });
      expect(await worker.handBack()).toEqual(['endless']);
    }
    const failed = (await queues.av.getJob('endless'))!;
    expect(failed).toMatchObject({ state: 'failed', attemptsMade: 2 });
    expect(isHandedBackTooOften(failed.failedReason)).toBe(true);
    expect(mediaWorkerSettingsFromEnv({}).freeHandBacks).toBe(DEFAULT_FREE_HAND_BACKS);
    expect(() => mediaWorkerSettingsFromEnv({ MEDIA_FREE_HAND_BACKS: '-1' })).toThrow(ConfigError);
  });

  it('reads its queues and concurrencies from the environment, and says what is wrong', () => {
    expect(mediaWorkerSettingsFromEnv({})).toMatchObject({ queues: ['stills', 'av'], concurrency: { stills: 2, av: 1 } });
    expect(mediaWorkerSettingsFromEnv({ MEDIA_QUEUES: 'av,av', MEDIA_AV_CONCURRENCY: '2' })).toMatchObject({
      queues: ['av'],
      concurrency: { av: 2 },
    });
    // The setting from before the split still sets the audio/video concurrency.
    expect(mediaWorkerSettingsFromEnv({ MEDIA_WORKER_CONCURRENCY: '3' }).concurrency.av).toBe(3);
    expect(mediaWorkerSettingsFromEnv({ MEDIA_WORKER_CONCURRENCY: '3', MEDIA_AV_CONCURRENCY: '1' }).concurrency.av).toBe(1);
    expect(() => mediaWorkerSettingsFromEnv({ MEDIA_QUEUES: 'stills,video' })).toThrow(ConfigError);
    expect(() => mediaWorkerSettingsFromEnv({ MEDIA_QUEUES: ' , ' })).toThrow(/at least one queue/);
    expect(() => mediaWorkerSettingsFromEnv({ MEDIA_STILLS_CONCURRENCY: '0' })).toThrow(ConfigError);
  });
});
