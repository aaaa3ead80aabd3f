import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { MediaJob, MediaProcessedData, MediaType } from '@portal/contracts';
import { FsBlobStore, SqliteEventBus, type ActiveJob } from '@portal/platform';
import { ffmpegBuilds, hostileMediaCorpus, useFfmpegBuild } from '../../../tests/support/hostile-media.js';
import { makeMediaFixtures, type MediaFixtures } from '../../../tests/support/media-fixtures.js';
import { readFileSync } from 'node:fs';
import { mediaJobHandler } from '../src/media-job-handler.js';

const ONBOARDING_VIDEO = fileURLToPath(new URL('../../../web/public/onboarding/onboarding.mp4', import.meta.url));

/** What a participant may be shown: no server path, no ffmpeg output. */
function expectParticipantSafe(message: string | null): void {
  expect(message ?? '').not.toMatch(/\/[\w.-]+\/|\\|ffmpeg|ffprobe|Invalid data|Error|original/i);
}

// The worker on its own, as if the upload check had been passed (a job queued by an older
// version, or a check fooled some new way): it must still read nothing but the upload.
describe.each(ffmpegBuilds())('the media worker given hostile media, $name', ({ build, missing }) => {
  if (!build) {
    it.skip(`needs ${missing}`, () => undefined);
    return;
  }
  let restore: () => void;
  let root: string;
  let blobs: FsBlobStore;
  let bus: SqliteEventBus;
  let fixtures: MediaFixtures;
  let handle: ReturnType<typeof mediaJobHandler>;
  beforeAll(async () => {
    restore = useFfmpegBuild(build);
    root = mkdtempSync(join(tmpdir(), 'hostile-jobs-'));
    fixtures = await makeMediaFixtures(join(root, 'fixtures'));
    blobs = new FsBlobStore(join(root, 'blobs'));
    bus = new SqliteEventBus({ file: join(root, 'bus.sqlite'), logger: pino({ level: 'silent' }), pruneAfterMs: 60_000 });
    handle = mediaJobHandler({
      blobs,
      bus,
      logger: pino({ level: 'silent' }),
      workRoot: join(root, 'work'),
      caps: {
        maxVideoSeconds: 60,
        maxAudioSeconds: 60,
        maxStreams: 8,
        maxVideoSide: 8192,
        maxVideoPixels: 33_177_600,
        maxVideoFps: 240,
        maxVideoPixelBudget: 150e9,
      },
    });
  }, 120_000);
  afterAll(async () => {
    await bus?.close();
    restore?.();
    if (root) rmSync(root, { recursive: true, force: true });
  });

  let counter = 0;
  async function runJob(bytes: Buffer, media_type: MediaType, demuxer?: string): Promise<MediaProcessedData> {
    const id = `item-${++counter}`;
    await blobs.put(`evidence/${id}/r1/original`, bytes, { contentType: 'application/octet-stream' });
    const job: ActiveJob<MediaJob> = {
      id: `${id}.r1`,
      name: 'process-media',
      attemptsMade: 0,
      postponements: 0,
      data: {
        evidenceId: id,
        revision: 1,
        media_type,
        originalKey: `evidence/${id}/r1/original`,
        outputPrefix: `evidence/${id}/r1/`,
        ...(demuxer ? { demuxer } : {}),
      },
      updateProgress: async () => undefined,
    };
    return handle(job);
  }

  const CORPUS = hostileMediaCorpus('/x').map((file) => file.name);
  it.each(CORPUS)(
    'ends %s failed, as a video or a recording, whatever demuxer the job names',
    async (name) => {
      const file = hostileMediaCorpus(ONBOARDING_VIDEO).find((candidate) => candidate.name === name)!;
      for (const media_type of [3, 4] as const) {
        // No demuxer (a job queued again after a crash), the one the upload check would choose
        // from the signature, and a playlist demuxer smuggled into the job.
        for (const demuxer of [undefined, media_type === 3 ? 'flv' : 'flac', 'hls']) {
          const result = await runJob(file.bytes, media_type, demuxer);
          expect({ status: result.status, display: result.display }, `${media_type} with ${demuxer ?? 'no demuxer'}`).toEqual({
            status: 'failed',
            display: null,
          });
          expectParticipantSafe(result.error);
        }
      }
    },
    120_000,
  );

  it('still processes good files afterwards', async () => {
    expect(await runJob(readFileSync(fixtures.phoneMp4), 3, 'mov')).toMatchObject({ status: 'ready' });
    expect(await runJob(readFileSync(fixtures.mp3), 4, 'mp3')).toMatchObject({ status: 'ready' });
    // A job queued before demuxers were recorded still works.
    expect(await runJob(readFileSync(fixtures.browserWebm), 3)).toMatchObject({ status: 'ready' });
    expect(await runJob(readFileSync(fixtures.chromeAudioWebm), 4)).toMatchObject({ status: 'ready' });
  }, 120_000);
});
