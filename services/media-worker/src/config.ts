import { join } from 'node:path';
import { z } from 'zod';
import { MEDIA_QUEUE_KINDS, faceBlurEnv, type MediaQueueKind } from '@portal/contracts';
import { DEFAULT_FREE_HAND_BACKS, mediaCapsFromEnv, parseEnv, type MediaCaps } from '@portal/platform';
import { DEFAULT_TRANSCODE_WATCHDOG, type TranscodeWatchdog } from './processing/ffmpeg-runner.js';
import { TRANSCODE_POLICIES, type TranscodePolicy } from './processing/playable.js';
import type { FaceSettings } from './faces/face-work.js';

/** The detector's score from which a face counts (bench/faces: recall and false positives at it). */
export const DEFAULT_FACE_MIN_CONFIDENCE = 0.3;

export interface MediaWorkerSettings {
  dataDir: string;
  /** The media queues this worker takes (stills: images; av: video and audio). */
  queues: MediaQueueKind[];
  /** Jobs processed at once per queue (ffmpeg uses up to two threads per audio/video job). */
  concurrency: Record<MediaQueueKind, number>;
  workRoot: string;
  /** A job whose worker stops renewing its lock for this long (it died) goes to another worker. */
  lockDurationMs: number;
  /**
   * MEDIA_FREE_HAND_BACKS: times a job may be handed back at a shutdown (scale-down, rollout) with
   * no try counted; each hand-back after that uses one of its tries, so a video longer than every
   * grace period ends failed ("interrupted too many times") instead of restarting for ever.
   */
  freeHandBacks: number;
  /** MEDIA_MAX_VIDEO_SECONDS, MEDIA_MAX_AUDIO_SECONDS, MEDIA_MAX_STREAMS, MEDIA_MAX_VIDEO_SIDE, MEDIA_MAX_VIDEO_FPS (the evidence service reads the same). */
  caps: MediaCaps;
  /**
   * The niceness ffmpeg runs at (MEDIA_AV_NICE, 0-19): below the worker's own priority, so that
   * where photos and videos share cores (the default worker, the all-in-one portal) sharp's work
   * on a photo, and the portal's requests, come first and a transcode takes what is left.
   */
  ffmpegNiceness: number;
  /**
   * A transcode running longer than MEDIA_TRANSCODE_TIME_FACTOR × the input's length +
   * MEDIA_TRANSCODE_SLACK_SECONDS is stopped, and the item ends failed.
   */
  watchdog: TranscodeWatchdog;
  /**
   * MEDIA_TRANSCODE_POLICY: `playable-first` (default) makes a video whose streams every browser
   * plays ready with a remux of them, and its 720p copy afterwards in a second job;
   * `always` transcodes every video before it is ready.
   */
  transcodePolicy: TranscodePolicy;
  /** FACE_BLUR, FACE_MIN_CONFIDENCE, FACE_VIDEO_SAMPLES_PER_SECOND (docs/OPERATIONS.md). */
  faces: FaceSettings;
}

const concurrency = z.coerce.number().int().min(1).max(16);

const mediaQueuesSetting = z
  .string()
  .transform((value) =>
    value
      .split(',')
      .map((part) => part.trim())
      .filter(Boolean),
  )
  .pipe(
    z
      .array(
        z.enum(MEDIA_QUEUE_KINDS as [MediaQueueKind, ...MediaQueueKind[]], {
          message: `each queue must be one of ${MEDIA_QUEUE_KINDS.join(', ')}`,
        }),
      )
      .min(1, 'name at least one queue')
      .transform((kinds) => [...new Set(kinds)]),
  );

const mediaWorkerEnvSchema = z.object({
  DATA_DIR: z.string().default('./data'),
  MEDIA_QUEUES: mediaQueuesSetting.default(['stills', 'av']),
  MEDIA_STILLS_CONCURRENCY: concurrency.default(2),
  MEDIA_AV_CONCURRENCY: concurrency.optional(),
  /** The setting from before the queues were split: the audio/video concurrency when MEDIA_AV_CONCURRENCY is unset. */
  MEDIA_WORKER_CONCURRENCY: concurrency.optional(),
  MEDIA_WORK_DIR: z.string().optional(),
  MEDIA_JOB_LOCK_MS: z.coerce.number().int().min(1000).default(60_000),
  MEDIA_FREE_HAND_BACKS: z.coerce.number().int().min(0).max(100).default(DEFAULT_FREE_HAND_BACKS),
  MEDIA_AV_NICE: z.coerce.number().int().min(0).max(19).default(10),
  MEDIA_TRANSCODE_TIME_FACTOR: z.coerce.number().positive().default(DEFAULT_TRANSCODE_WATCHDOG.factor),
  MEDIA_TRANSCODE_SLACK_SECONDS: z.coerce.number().min(0).default(DEFAULT_TRANSCODE_WATCHDOG.slackSeconds),
  MEDIA_TRANSCODE_POLICY: z
    .enum(TRANSCODE_POLICIES, { message: `MEDIA_TRANSCODE_POLICY must be ${TRANSCODE_POLICIES.join(' or ')}` })
    .default('playable-first'),
  FACE_BLUR: faceBlurEnv,
  FACE_MIN_CONFIDENCE: z.coerce.number().min(0.05).max(0.99).default(DEFAULT_FACE_MIN_CONFIDENCE),
  FACE_VIDEO_SAMPLES_PER_SECOND: z.coerce.number().min(4, 'FACE_VIDEO_SAMPLES_PER_SECOND must be at least 4').max(30).default(4),
});

export function mediaWorkerSettingsFromEnv(env: NodeJS.ProcessEnv = process.env): MediaWorkerSettings {
  const parsed = parseEnv(mediaWorkerEnvSchema, env);
  return {
    dataDir: parsed.DATA_DIR,
    queues: parsed.MEDIA_QUEUES,
    concurrency: { stills: parsed.MEDIA_STILLS_CONCURRENCY, av: parsed.MEDIA_AV_CONCURRENCY ?? parsed.MEDIA_WORKER_CONCURRENCY ?? 1 },
    workRoot: parsed.MEDIA_WORK_DIR ?? join(parsed.DATA_DIR, 'tmp', 'media-worker'),
    lockDurationMs: parsed.MEDIA_JOB_LOCK_MS,
    freeHandBacks: parsed.MEDIA_FREE_HAND_BACKS,
    caps: mediaCapsFromEnv(env),
    ffmpegNiceness: parsed.MEDIA_AV_NICE,
    watchdog: { factor: parsed.MEDIA_TRANSCODE_TIME_FACTOR, slackSeconds: parsed.MEDIA_TRANSCODE_SLACK_SECONDS },
    transcodePolicy: parsed.MEDIA_TRANSCODE_POLICY,
    faces: {
      mode: parsed.FACE_BLUR,
      minConfidence: parsed.FACE_MIN_CONFIDENCE,
      samplesPerSecond: parsed.FACE_VIDEO_SAMPLES_PER_SECOND,
    },
  };
}
