import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { once } from 'node:events';
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  MEDIA_QUEUES,
  mediaQueueKindFor,
  type MediaJob,
  type MediaProcessedData,
  type MediaQueueKind,
  type MediaType,
} from '@portal/contracts';
import {
  createBlobStore,
  createJobQueue,
  createKafkaTopics,
  infrastructureFromEnv,
  kafkaConnectionFromEnv,
  type BlobStore,
  type JobQueue,
} from '@portal/platform';
import { waitFor } from '@portal/platform/testing';
import { freePort } from '../support/free-port.js';
import { ffmpegBuilds, hostileMediaCorpus } from '../support/hostile-media.js';
import { makeMediaFixtures, type MediaFixtures } from '../support/media-fixtures.js';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const WORKER_MAIN = join(ROOT, 'services/media-worker/dist/main.js');
const ONBOARDING_VIDEO = join(ROOT, 'web/public/onboarding/onboarding.mp4');
const CORPUS = hostileMediaCorpus('/x').map((file) => file.name);

/** What a participant may be shown: no server path, no ffmpeg output. */
function expectParticipantSafe(message: string | null): void {
  expect(message ?? '').not.toMatch(/\/[\w.-]+\/|\\|ffmpeg|ffprobe|Invalid data|Error|original/i);
}

/**
 * The distributed media worker (its built process) on the shared Redis (BullMQ), S3 and Kafka,
 * given hostile originals straight through its queue, as if the upload check had been passed: it
 * must read nothing but the upload, with Debian's ffmpeg and with the npm static builds.
 */
describe.each(ffmpegBuilds())('the distributed media worker given hostile media, $name', ({ build, missing }) => {
  if (!build) {
    it.skip(`needs ${missing}`, () => undefined);
    return;
  }
  const namespace = `t${randomBytes(4).toString('hex')}`;
  let dataDir: string;
  let worker: ChildProcess;
  let output = '';
  let queues: Record<MediaQueueKind, JobQueue<MediaJob>> | undefined;
  let blobs: BlobStore;
  let fixtures: MediaFixtures;
  /** A video on the worker's disk that is not the job's: another job's original in its work folder. */
  let otherOriginal: string;

  beforeAll(async () => {
    for (const name of ['KAFKA_BROKERS', 'REDIS_URL', 'S3_BUCKET']) {
      if (!process.env[name])
        throw new Error(`${name} is not set: start the servers (infra/local/servers.sh start) and load infra/local/.env.servers`);
    }
    if (!existsSync(WORKER_MAIN)) throw new Error('services/media-worker/dist/main.js is missing: run npm run build first');
    dataDir = mkdtempSync(join(tmpdir(), 'hostile-worker-'));
    fixtures = await makeMediaFixtures(join(dataDir, 'fixtures'));
    otherOriginal = join(dataDir, 'tmp', 'media-worker', 'other-item.r1', 'original');
    mkdirSync(join(otherOriginal, '..'), { recursive: true });
    copyFileSync(fixtures.phoneMp4, otherOriginal);
    const env = {
      PATH: process.env.PATH ?? '',
      HOME: process.env.HOME ?? '',
      KAFKA_BROKERS: process.env.KAFKA_BROKERS!,
      REDIS_URL: process.env.REDIS_URL!,
      S3_ENDPOINT: process.env.S3_ENDPOINT ?? '',
      S3_BUCKET: process.env.S3_BUCKET!,
      S3_REGION: process.env.S3_REGION ?? 'us-east-1',
      S3_ACCESS_KEY_ID: process.env.S3_ACCESS_KEY_ID ?? '',
      S3_SECRET_ACCESS_KEY: process.env.S3_SECRET_ACCESS_KEY ?? '',
      S3_FORCE_PATH_STYLE: 'true',
      DEPLOYMENT_NAMESPACE: namespace,
      DATA_DIR: dataDir,
      MEDIA_WORK_DIR: join(dataDir, 'tmp', 'media-worker'),
      HEALTH_HOST: '127.0.0.1',
      HEALTH_PORT: String(await freePort()),
      FFMPEG_PATH: build.ffmpeg,
      FFPROBE_PATH: build.ffprobe,
      MEDIA_MAX_VIDEO_SECONDS: '60',
      MEDIA_MAX_AUDIO_SECONDS: '6',
      LOG_LEVEL: process.env.PORTAL_TEST_LOGS ? 'debug' : 'warn',
    };
    // The services never create topics (a deployment's kafka-topics Job does): the worker could
    // not publish its results into this fresh namespace otherwise.
    await createKafkaTopics({
      brokers: env.KAFKA_BROKERS.split(','),
      namespace,
      partitions: 1,
      replicationFactor: 1,
      retentionMs: 3_600_000,
      deadLetterRetentionMs: 3_600_000,
      ...kafkaConnectionFromEnv({ ...process.env, ...env }),
    });
    worker = spawn(process.execPath, [WORKER_MAIN], { cwd: ROOT, env, stdio: ['ignore', 'pipe', 'pipe'] });
    const append = (chunk: Buffer) => (output = (output + chunk.toString()).slice(-200_000));
    worker.stdout!.on('data', append);
    worker.stderr!.on('data', append);
    await waitFor(
      async () => {
        if (worker.exitCode !== null) throw new Error(`the media worker exited (${worker.exitCode}): ${output.slice(-3000)}`);
        return (await fetch(`http://127.0.0.1:${env.HEALTH_PORT}/readyz`).catch(() => null))?.status === 200;
      },
      { timeoutMs: 60_000, intervalMs: 200, what: 'the media worker to be ready' },
    );
    const infrastructure = infrastructureFromEnv({ ...env, DATA_DIR: dataDir });
    // Each job into the queue the evidence service would choose for its media type.
    queues = {
      stills: createJobQueue<MediaJob>(infrastructure, MEDIA_QUEUES.stills, pino({ level: 'silent' })),
      av: createJobQueue<MediaJob>(infrastructure, MEDIA_QUEUES.av, pino({ level: 'silent' })),
    };
    blobs = createBlobStore(infrastructure);
  }, 180_000);

  afterAll(async () => {
    if (worker && worker.exitCode === null && worker.signalCode === null) {
      const exited = once(worker, 'exit');
      worker.kill('SIGTERM');
      const timer = setTimeout(() => worker.kill('SIGKILL'), 15_000);
      await exited;
      clearTimeout(timer);
    }
    await blobs?.deletePrefix('evidence/').catch(() => undefined);
    await Promise.all(Object.values(queues ?? {}).map((queue) => queue.close()));
    if (dataDir) rmSync(dataDir, { recursive: true, force: true });
  });

  let counter = 0;
  /** Stores an original in S3, queues its job as the evidence service would, and waits for the worker's result. */
  async function runJob(bytes: Buffer, media_type: MediaType, demuxer?: string): Promise<MediaProcessedData> {
    const id = `item-${++counter}`;
    const prefix = `evidence/${id}/r1/`;
    await blobs.put(`${prefix}original`, bytes, { contentType: 'application/octet-stream' });
    const jobs = queues![mediaQueueKindFor(media_type)];
    await jobs.add(
      'process-media',
      { evidenceId: id, revision: 1, media_type, originalKey: `${prefix}original`, outputPrefix: prefix, ...(demuxer ? { demuxer } : {}) },
      { jobId: `${id}.r1`, attempts: 1 },
    );
    const done = await waitFor(
      async () => {
        const job = await jobs.getJob(`${id}.r1`);
        if (job?.state === 'failed') throw new Error(`the job failed outright: ${job.failedReason}\n${output.slice(-3000)}`);
        return job?.state === 'completed' ? job : null;
      },
      { timeoutMs: 120_000, intervalMs: 200, what: `the media job of ${id}` },
    );
    return done.returnValue as MediaProcessedData;
  }

  it.each(CORPUS)(
    'ends %s failed and stores nothing made from the file it names',
    async (name) => {
      for (const target of [ONBOARDING_VIDEO, otherOriginal]) {
        const file = hostileMediaCorpus(target).find((candidate) => candidate.name === name)!;
        for (const [media_type, demuxer] of [
          [3, 'flv'],
          [4, 'flac'],
          [3, undefined],
          [4, undefined],
        ] as const) {
          const result = await runJob(file.bytes, media_type, demuxer);
          expect({ status: result.status, display: result.display }, `${target} as ${media_type} with ${demuxer ?? 'no demuxer'}`).toEqual({
            status: 'failed',
            display: null,
          });
          expectParticipantSafe(result.error);
          for (const name of ['display.mp4', 'display.m4a', 'poster.webp', 'thumb.webp']) {
            expect(await blobs.stat(`evidence/item-${counter}/r1/${name}`)).toBeNull();
          }
        }
      }
    },
    240_000,
  );

  it('stops a recording that does not say its length at the cap', async () => {
    // Written to a pipe (as browsers' recorders do), the WebM carries no duration.
    const bytes = execFileSync(
      build.ffmpeg,
      ['-v', 'error', '-f', 'lavfi', '-i', 'sine=frequency=440:duration=10', '-c:a', 'libopus', '-f', 'webm', 'pipe:1'],
      {
        maxBuffer: 10 * 1024 * 1024,
      },
    );
    const result = await runJob(bytes, 4, 'matroska');
    expect(result).toMatchObject({
      status: 'failed',
      display: null,
      error: 'The file could not be processed: recordings can be at most 6 seconds long',
    });
  }, 120_000);

  it('is still up and processes good files afterwards', async () => {
    expect(await runJob(readFileSync(fixtures.phoneMp4), 3, 'mov')).toMatchObject({ status: 'ready' });
    expect(await runJob(readFileSync(fixtures.mp3), 4, 'mp3')).toMatchObject({ status: 'ready' });
    expect(worker.exitCode).toBeNull();
  }, 180_000);
});
