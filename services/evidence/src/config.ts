import { join } from 'node:path';
import { z } from 'zod';
import { DEFAULT_PUBLIC_LOCATION_DECIMALS, faceBlurEnv } from '@portal/contracts';
import {
  ConfigError,
  envBytes,
  envPort,
  mediaCapsFromEnv,
  parseEnv,
  type MediaCaps,
  sharedSecretEnv,
  sharedSecretOf,
  type SharedSecret,
} from '@portal/platform';
import type { MediaLimits, OlderFaceChecks } from './domain/evidence-service.js';

export interface EvidenceSettings {
  host: string;
  port: number;
  dataDir: string;
  /** INTERNAL_SECRET signs and seals; INTERNAL_SECRET_PREVIOUS, during a rotation, is accepted when checking. */
  internalSecret: SharedSecret;
  limits: MediaLimits;
  /** MEDIA_MAX_VIDEO_SECONDS, MEDIA_MAX_AUDIO_SECONDS, MEDIA_MAX_STREAMS, MEDIA_MAX_VIDEO_SIDE, MEDIA_MAX_VIDEO_FPS. */
  mediaCaps: MediaCaps;
  /** Unfinished resumable uploads untouched for this long are removed (ms). */
  uploadExpiryMs: number;
  /** The bytes one participant's unfinished resumable uploads may declare together. */
  unfinishedUploadBytesPerParticipant: number;
  /** Decimals of a device position in public answers (3: about 100 m). */
  publicLocationDecimals: number;
  /**
   * UPLOAD_SCRATCH_BYTES: the local scratch space finished resumable uploads kept in S3 may take
   * at once while they are read back for inspection (at least the largest file; by default 4 GiB,
   * half of a pod's 8 Gi scratch, the rest for received multipart files). A finish beyond it is
   * answered 503 with Retry-After and done when the client asks again.
   */
  uploadScratchBytes: number;
  /**
   * FACE_BLUR (as the media worker reads it) and FACE_CHECK_OLDER_AT_ONCE: with `auto`, items
   * processed before faces were checked are hidden from the public and checked, this many photos
   * and this many videos at a time (docs/OPERATIONS.md).
   */
  olderFaceChecks: OlderFaceChecks;
}

const evidenceEnvSchema = z.object({
  EVIDENCE_HOST: z.string().default('127.0.0.1'),
  EVIDENCE_PORT: envPort.default(4002),
  DATA_DIR: z.string().default('./data'),
  ...sharedSecretEnv,
  EVIDENCE_IMAGE_MAX_BYTES: envBytes.default(30 * 1024 ** 2),
  EVIDENCE_VIDEO_MAX_BYTES: envBytes.default(1024 ** 3),
  EVIDENCE_AUDIO_MAX_BYTES: envBytes.default(200 * 1024 ** 2),
  UPLOAD_EXPIRY_HOURS: z.coerce.number().positive().default(24),
  UPLOAD_UNFINISHED_BYTES_PER_PARTICIPANT: envBytes.optional(),
  UPLOAD_SCRATCH_BYTES: envBytes.optional(),
  PUBLIC_LOCATION_DECIMALS: z.coerce
    .number()
    .int('must be a whole number from 0 to 5')
    .min(0, 'must be a whole number from 0 to 5')
    .max(5, 'must be a whole number from 0 to 5')
    .default(DEFAULT_PUBLIC_LOCATION_DECIMALS),
  FACE_BLUR: faceBlurEnv,
  FACE_CHECK_OLDER_AT_ONCE: z.coerce
    .number()
    .int('must be a whole number from 1 to 500')
    .min(1, 'must be a whole number from 1 to 500')
    .max(500, 'must be a whole number from 1 to 500')
    .default(10),
});

export function evidenceSettingsFromEnv(env: NodeJS.ProcessEnv = process.env): EvidenceSettings {
  const parsed = parseEnv(evidenceEnvSchema, env);
  const largest = Math.max(parsed.EVIDENCE_IMAGE_MAX_BYTES, parsed.EVIDENCE_VIDEO_MAX_BYTES, parsed.EVIDENCE_AUDIO_MAX_BYTES);
  const uploadScratchBytes = parsed.UPLOAD_SCRATCH_BYTES ?? Math.max(4 * 1024 ** 3, largest);
  // Smaller than the largest file, that file could never be finished.
  if (uploadScratchBytes < largest) {
    throw new ConfigError(`Invalid configuration:\n  UPLOAD_SCRATCH_BYTES: must be at least the largest file allowed (${largest} bytes)`);
  }
  return {
    host: parsed.EVIDENCE_HOST,
    port: parsed.EVIDENCE_PORT,
    dataDir: parsed.DATA_DIR,
    internalSecret: sharedSecretOf(parsed),
    limits: { image: parsed.EVIDENCE_IMAGE_MAX_BYTES, video: parsed.EVIDENCE_VIDEO_MAX_BYTES, audio: parsed.EVIDENCE_AUDIO_MAX_BYTES },
    uploadExpiryMs: parsed.UPLOAD_EXPIRY_HOURS * 3600_000,
    // By default two of the largest files: one upload and the remains of one that was given up.
    unfinishedUploadBytesPerParticipant:
      parsed.UPLOAD_UNFINISHED_BYTES_PER_PARTICIPANT ??
      2 * Math.max(parsed.EVIDENCE_IMAGE_MAX_BYTES, parsed.EVIDENCE_VIDEO_MAX_BYTES, parsed.EVIDENCE_AUDIO_MAX_BYTES),
    mediaCaps: mediaCapsFromEnv(env),
    publicLocationDecimals: parsed.PUBLIC_LOCATION_DECIMALS,
    uploadScratchBytes,
    olderFaceChecks: { mode: parsed.FACE_BLUR, atOnce: parsed.FACE_CHECK_OLDER_AT_ONCE },
  };
}

export const evidenceDatabaseFile = (dataDir: string) => join(dataDir, 'evidence.sqlite');
export const jobsDatabaseFile = (dataDir: string) => join(dataDir, 'jobs.sqlite');
