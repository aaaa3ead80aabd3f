import { z } from 'zod';
import { parseEnv } from '../config/env.js';
import type { ProbeResult } from './ffmpeg-binaries.js';

/**
 * How long a video or a recording may be and how many tracks a file may hold: a crafted file
 * (hours of silence in a few kilobytes, hundreds of tracks) must not keep a media worker busy
 * until its job timeout. The upload check refuses what ffprobe shows to be over the caps; the
 * worker checks again and stops ffmpeg at the cap for files that do not say their length.
 */
export interface MediaCaps {
  maxVideoSeconds: number;
  maxAudioSeconds: number;
  /** Tracks of any kind in one file (a phone's video has a picture, a sound and a few metadata tracks). */
  maxStreams: number;
}

export const mediaCapsEnvSchema = z.object({
  MEDIA_MAX_VIDEO_SECONDS: z.coerce.number().positive().default(7200),
  MEDIA_MAX_AUDIO_SECONDS: z.coerce.number().positive().default(14_400),
  MEDIA_MAX_STREAMS: z.coerce.number().int().min(2).max(1000).default(16),
});

export function mediaCapsFromEnv(env: NodeJS.ProcessEnv = process.env): MediaCaps {
  const parsed = parseEnv(mediaCapsEnvSchema, env);
  return { maxVideoSeconds: parsed.MEDIA_MAX_VIDEO_SECONDS, maxAudioSeconds: parsed.MEDIA_MAX_AUDIO_SECONDS, maxStreams: parsed.MEDIA_MAX_STREAMS };
}

/** 7200 → "2 hours", 90 → "90 seconds", 5400 → "90 minutes". */
export function describeSeconds(seconds: number): string {
  const unit = (value: number, name: string) => `${+value.toFixed(1)} ${name}${value === 1 ? '' : 's'}`;
  if (seconds >= 3600 && seconds % 3600 === 0) return unit(seconds / 3600, 'hour');
  if (seconds >= 120 && seconds % 60 === 0) return unit(seconds / 60, 'minute');
  return unit(seconds, 'second');
}

export type MediaKind = 'video' | 'audio';

/** The longest a file of that kind may be, in seconds. */
export function maxSecondsOf(kind: MediaKind, caps: MediaCaps): number {
  return kind === 'video' ? caps.maxVideoSeconds : caps.maxAudioSeconds;
}

/** "Videos can be at most 2 hours long" (for a participant; the worker puts it after its own prefix in lower case). */
export function tooLongMessage(kind: MediaKind, caps: MediaCaps): string {
  return `${kind === 'video' ? 'Videos' : 'Recordings'} can be at most ${describeSeconds(maxSecondsOf(kind, caps))} long`;
}

export function tooManyStreamsMessage(caps: MediaCaps): string {
  return `This file has more tracks than the portal takes (at most ${caps.maxStreams})`;
}

export type CapBreach = { cap: 'duration' | 'streams'; message: string };

/** The first cap a probed file breaks, or null. A file that does not say its length passes here (the worker stops it at the cap). */
export function capBreach(probe: ProbeResult, kind: MediaKind, caps: MediaCaps): CapBreach | null {
  if (probe.streams.length > caps.maxStreams) return { cap: 'streams', message: tooManyStreamsMessage(caps) };
  const seconds = Number(probe.format.duration);
  if (Number.isFinite(seconds) && seconds > maxSecondsOf(kind, caps)) return { cap: 'duration', message: tooLongMessage(kind, caps) };
  return null;
}
