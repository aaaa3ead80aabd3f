import { join } from 'node:path';
import { z } from 'zod';
import { mediaCapsFromEnv, parseEnv, type MediaCaps } from '@portal/platform';

export interface MediaWorkerSettings {
  dataDir: string;
  /** Jobs processed at once by this worker (ffmpeg uses up to two threads per job). */
  concurrency: number;
  workRoot: string;
  /** A job whose worker stops renewing its lock for this long (it died) goes to another worker. */
  lockDurationMs: number;
  /** MEDIA_MAX_VIDEO_SECONDS, MEDIA_MAX_AUDIO_SECONDS, MEDIA_MAX_STREAMS (the evidence service reads the same). */
  caps: MediaCaps;
}

const mediaWorkerEnvSchema = z.object({
  DATA_DIR: z.string().default('./data'),
  MEDIA_WORKER_CONCURRENCY: z.coerce.number().int().min(1).max(16).default(1),
  MEDIA_WORK_DIR: z.string().optional(),
  MEDIA_JOB_LOCK_MS: z.coerce.number().int().min(1000).default(60_000),
});

export function mediaWorkerSettingsFromEnv(env: NodeJS.ProcessEnv = process.env): MediaWorkerSettings {
  const parsed = parseEnv(mediaWorkerEnvSchema, env);
  return {
    dataDir: parsed.DATA_DIR,
    concurrency: parsed.MEDIA_WORKER_CONCURRENCY,
    workRoot: parsed.MEDIA_WORK_DIR ?? join(parsed.DATA_DIR, 'tmp', 'media-worker'),
    lockDurationMs: parsed.MEDIA_JOB_LOCK_MS,
    caps: mediaCapsFromEnv(env),
  };
}
