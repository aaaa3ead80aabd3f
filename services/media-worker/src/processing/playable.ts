import { frameRateOf, type ProbeResult, type ProbedStream } from '@portal/platform';
import { probedSeconds } from './ffmpeg-runner.js';

/**
 * MEDIA_TRANSCODE_POLICY: `playable-first` makes a first display copy of a browser-playable
 * video by remuxing its streams (seconds), then the 720p copy in a second job; `always`
 * transcodes every video to 720p before it is ready.
 */
export const TRANSCODE_POLICIES = ['playable-first', 'always'] as const;
export type TranscodePolicy = (typeof TRANSCODE_POLICIES)[number];

/** The H.264 profiles every browser decodes (Chromium, Firefox, Safari; desktop and phones). */
const H264_PROFILES = new Set(['Constrained Baseline', 'Baseline', 'Main', 'High']);
/** Level 4.2: 1080p at up to 60 frames a second; what phones record by default. */
const MAX_H264_LEVEL = 42;
/** 8-bit 4:2:0 (the "j" form is the full-range variant some Android phones write). */
const PIXEL_FORMATS = new Set(['yuv420p', 'yuvj420p']);
const MAX_LONG_SIDE = 1920;
const MAX_SHORT_SIDE = 1080;
const MAX_FPS = 60;
const MAX_AUDIO_CHANNELS = 2;
const MAX_SAMPLE_RATE = 48_000;

export type Playability = { playable: true; video: ProbedStream; audio: ProbedStream | undefined } | { playable: false; reason: string };

/**
 * Whether a video's own streams play in every browser the portal supports, so that copying them
 * into a fresh MP4 (no re-encode) is a display copy: an MP4 or MOV (the `mov` demuxer) whose
 * first picture track is H.264 (avc1) Baseline/Main/High up to level 4.2, 8-bit 4:2:0,
 * progressive, at most 1920x1080 (either way up) and 60 frames a second, and whose first sound
 * track, if any, is AAC-LC in mono or stereo up to 48 kHz. The container must say its length
 * (the length cap is checked on it). Anything else (HEVC, VP9, AV1, 10-bit HDR, 4K, interlaced,
 * Opus, AC-3, AAC-HE...) is transcoded. See docs/decisions/0014-playable-first-video.md.
 */
export function playability(probe: ProbeResult, demuxer: string): Playability {
  const no = (reason: string): Playability => ({ playable: false, reason });
  if (demuxer !== 'mov') return no(`container read by ${demuxer}, not MP4/MOV`);
  if (probedSeconds(probe.format.duration) === null) return no('the container does not say its length');
  const video = probe.streams.find((stream) => stream.codec_type === 'video' && !stream.disposition?.attached_pic);
  const audio = probe.streams.find((stream) => stream.codec_type === 'audio');
  if (!video) return no('no picture track');
  if (video.codec_name !== 'h264') return no(`video codec ${video.codec_name ?? 'unknown'}`);
  if (video.codec_tag_string !== 'avc1') return no(`H.264 sample entry ${video.codec_tag_string ?? 'unknown'}`);
  if (!H264_PROFILES.has(video.profile ?? '')) return no(`H.264 profile ${video.profile ?? 'unknown'}`);
  if (typeof video.level !== 'number' || video.level <= 0 || video.level > MAX_H264_LEVEL)
    return no(`H.264 level ${video.level ?? 'unknown'}`);
  if (!PIXEL_FORMATS.has(video.pix_fmt ?? '')) return no(`pixel format ${video.pix_fmt ?? 'unknown'}`);
  if (video.field_order !== undefined && video.field_order !== 'progressive' && video.field_order !== 'unknown')
    return no(`interlaced (${video.field_order})`);
  const width = video.width ?? 0;
  const height = video.height ?? 0;
  if (width <= 0 || height <= 0) return no('picture size unknown');
  if (Math.max(width, height) > MAX_LONG_SIDE || Math.min(width, height) > MAX_SHORT_SIDE) return no(`picture ${width}x${height}`);
  const fps = frameRateOf(video.avg_frame_rate);
  if (fps !== null && fps > MAX_FPS + 0.01) return no(`${fps.toFixed(2)} frames a second`);
  if (audio) {
    if (audio.codec_name !== 'aac' || audio.profile !== 'LC')
      return no(`audio ${audio.codec_name ?? 'unknown'} ${audio.profile ?? ''}`.trim());
    if (!audio.channels || audio.channels > MAX_AUDIO_CHANNELS) return no(`${audio.channels ?? 'unknown'} audio channels`);
    const rate = Number(audio.sample_rate);
    if (!Number.isFinite(rate) || rate <= 0 || rate > MAX_SAMPLE_RATE) return no(`audio at ${audio.sample_rate ?? 'unknown'} Hz`);
  }
  return { playable: true, video, audio };
}

/** The turn (degrees) a picture track's display matrix asks for, 0 when none. */
export function rotationOf(stream: ProbedStream): number {
  const fromMatrix = stream.side_data_list?.find((data) => typeof data.rotation === 'number')?.rotation;
  const degrees = fromMatrix ?? Number(stream.tags?.rotate ?? 0);
  return Number.isFinite(degrees) ? ((Math.round(degrees) % 360) + 360) % 360 : 0;
}

/** The picture's width and height as shown (a quarter turn swaps them). */
export function shownSize(stream: ProbedStream): { width: number | null; height: number | null } {
  const width = stream.width ?? null;
  const height = stream.height ?? null;
  const turn = rotationOf(stream);
  return turn === 90 || turn === 270 ? { width: height, height: width } : { width, height };
}
