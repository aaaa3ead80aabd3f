import { z } from 'zod';
import { parseEnv } from '../config/env.js';
import type { ProbeResult } from './ffmpeg-binaries.js';

/**
 * How long a video or a recording may be, how many tracks a file may hold, how large a video's
 * picture, how many frames a second and how many pixels in all: a crafted file (hours of silence
 * in a few kilobytes, hundreds of tracks, a picture of 30000 pixels a side or 5000 frames a second
 * of a few bytes each, or 8K at 240 frames a second for two hours, each cap kept alone) must not
 * keep a media worker busy until its job timeout or exhaust its memory. The defaults take what a
 * phone records (8K at 30 frames a second, 4K at 60, 1080p slow motion at 240) and refuse what no
 * phone does. The upload check refuses what ffprobe shows to be over the caps; the worker checks
 * again, stops ffmpeg at the length cap for files that do not say their length, and stops a
 * transcode that runs far longer than the file's length predicts (its watchdog).
 */
export interface MediaCaps {
  maxVideoSeconds: number;
  maxAudioSeconds: number;
  /** Tracks of any kind in one file (a phone's video has a picture, a sound and a few metadata tracks). */
  maxStreams: number;
  /** The longest side of any video track's picture, in pixels (8K is 7680 or 8192). */
  maxVideoSide: number;
  /** Pixels in one picture of any video track (a phone's 8K, 7680x4320, is 33.2 million). */
  maxVideoPixels: number;
  /** Frames a second of any video track, over the track (phones' slow motion records 240). */
  maxVideoFps: number;
  /**
   * Pixels to decode in a whole video track: width × height × frames a second × seconds. What a
   * transcode costs grows with it; the default, 150 billion, is about 40 minutes of 1080p at 30
   * frames a second, 10 of 4K at 30, 2 and a half of 8K at 30, well within the job timeout.
   */
  maxVideoPixelBudget: number;
}

/**
 * How long one ffmpeg run may take before the media worker stops it (a job that runs away), and
 * the longest video the portal takes: a transcode runs at about its video's length or faster on
 * a 2-core worker (a 1080p phone video at about twice its speed, a 4K HEVC one, which the pixel
 * budget keeps to 10 minutes at 30 frames a second, at about its own; bench/transcode), so any
 * video within the cap finishes within ffmpeg's limit. The audio/video workers' shutdown grace
 * period (1920 s in k8s/components/media-worker-split) is this plus a download and an upload.
 */
export const FFMPEG_TIME_LIMIT_SECONDS = 30 * 60;

export const mediaCapsEnvSchema = z.object({
  MEDIA_MAX_VIDEO_SECONDS: z.coerce
    .number()
    .positive()
    .max(FFMPEG_TIME_LIMIT_SECONDS, {
      error: `must be at most ${FFMPEG_TIME_LIMIT_SECONDS}: ffmpeg is stopped after ${FFMPEG_TIME_LIMIT_SECONDS / 60} minutes, and a longer video could never be converted`,
    })
    .default(FFMPEG_TIME_LIMIT_SECONDS),
  MEDIA_MAX_AUDIO_SECONDS: z.coerce.number().positive().default(14_400),
  MEDIA_MAX_STREAMS: z.coerce.number().int().min(2).max(1000).default(16),
  MEDIA_MAX_VIDEO_SIDE: z.coerce.number().int().min(64).max(16_384).default(8192),
  MEDIA_MAX_VIDEO_PIXELS: z.coerce
    .number()
    .int()
    .min(4096)
    .max(268_435_456)
    .default(7680 * 4320),
  MEDIA_MAX_VIDEO_FPS: z.coerce.number().positive().max(10_000).default(240),
  MEDIA_MAX_VIDEO_PIXEL_BUDGET: z.coerce.number().positive().default(150e9),
});

export function mediaCapsFromEnv(env: NodeJS.ProcessEnv = process.env): MediaCaps {
  const parsed = parseEnv(mediaCapsEnvSchema, env);
  return {
    maxVideoSeconds: parsed.MEDIA_MAX_VIDEO_SECONDS,
    maxAudioSeconds: parsed.MEDIA_MAX_AUDIO_SECONDS,
    maxStreams: parsed.MEDIA_MAX_STREAMS,
    maxVideoSide: parsed.MEDIA_MAX_VIDEO_SIDE,
    maxVideoPixels: parsed.MEDIA_MAX_VIDEO_PIXELS,
    maxVideoFps: parsed.MEDIA_MAX_VIDEO_FPS,
    maxVideoPixelBudget: parsed.MEDIA_MAX_VIDEO_PIXEL_BUDGET,
  };
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

export function tooLargePictureMessage(caps: MediaCaps): string {
  return `This video's picture is larger than the portal takes (at most ${caps.maxVideoSide} pixels a side)`;
}

export function tooManyPixelsMessage(caps: MediaCaps): string {
  return `This video's picture has more pixels than the portal takes (at most ${+(caps.maxVideoPixels / 1e6).toFixed(1)} million a frame)`;
}

/**
 * "At 3840×2160 pixels and 60 frames a second, a video can be at most 5 minutes long: this one is
 * longer" (the length the budget leaves for this picture and this frame rate, rounded down).
 */
export function overPixelBudgetMessage(width: number, height: number, fps: number, caps: MediaCaps): string {
  const seconds = caps.maxVideoPixelBudget / (width * height * fps);
  const most =
    seconds < 1
      ? 'less than a second'
      : seconds < 120
        ? `${Math.floor(seconds)} second${Math.floor(seconds) === 1 ? '' : 's'}`
        : `${Math.floor(seconds / 60)} minutes`;
  return `At ${width}×${height} pixels and ${+fps.toFixed(2)} frames a second, a video can be at most ${most} long: this one is longer`;
}

export function tooManyFramesMessage(caps: MediaCaps): string {
  return `This video has more frames a second than the portal takes (at most ${+caps.maxVideoFps.toFixed(2)})`;
}

/** "30000/1001" → 29.97; null for "0/0", a missing or a malformed rate (not known: not refused). */
export function frameRateOf(fraction: string | undefined): number | null {
  const match = /^(\d+)\/(\d+)$/.exec(fraction ?? '');
  if (!match || Number(match[2]) === 0) return null;
  const rate = Number(match[1]) / Number(match[2]);
  return rate > 0 && Number.isFinite(rate) ? rate : null;
}

export type CapBreach = { cap: 'duration' | 'streams' | 'picture' | 'pixels' | 'frame-rate' | 'pixel-budget'; message: string };

/**
 * The first cap a probed file breaks, or null. A file that does not say its length or its frame
 * rate passes the length and budget caps here (the worker stops it at the length cap, and its
 * watchdog stops a transcode that runs far past what the length predicts).
 */
export function capBreach(probe: ProbeResult, kind: MediaKind, caps: MediaCaps): CapBreach | null {
  if (probe.streams.length > caps.maxStreams) return { cap: 'streams', message: tooManyStreamsMessage(caps) };
  for (const stream of probe.streams) {
    if (stream.codec_type !== 'video') continue;
    const width = stream.width ?? 0;
    const height = stream.height ?? 0;
    if (Math.max(width, height) > caps.maxVideoSide) return { cap: 'picture', message: tooLargePictureMessage(caps) };
    if (width * height > caps.maxVideoPixels) return { cap: 'pixels', message: tooManyPixelsMessage(caps) };
    // A cover picture (attached_pic) is one frame, whatever rate its track claims.
    const fps = stream.disposition?.attached_pic ? null : frameRateOf(stream.avg_frame_rate);
    if (fps !== null && fps > caps.maxVideoFps + 0.01) return { cap: 'frame-rate', message: tooManyFramesMessage(caps) };
  }
  const seconds = Number(probe.format.duration);
  if (Number.isFinite(seconds) && seconds > maxSecondsOf(kind, caps)) return { cap: 'duration', message: tooLongMessage(kind, caps) };
  if (kind === 'video' && Number.isFinite(seconds)) {
    for (const stream of probe.streams) {
      if (stream.codec_type !== 'video' || stream.disposition?.attached_pic) continue;
      const fps = frameRateOf(stream.avg_frame_rate);
      const width = stream.width ?? 0;
      const height = stream.height ?? 0;
      if (fps !== null && width * height * fps * seconds > caps.maxVideoPixelBudget) {
        return { cap: 'pixel-budget', message: overPixelBudgetMessage(width, height, fps, caps) };
      }
    }
  }
  return null;
}
