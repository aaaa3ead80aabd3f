import { execFile } from 'node:child_process';
import { accessSync, constants } from 'node:fs';
import { createRequire } from 'node:module';
import { delimiter, join } from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);

export interface FfmpegBinaries {
  ffmpeg: string;
  ffprobe: string;
  /** Where they came from: the environment, the system PATH, or the npm fallback packages. */
  source: 'env' | 'system' | 'npm';
}

function onPath(command: string): string | null {
  for (const folder of (process.env.PATH ?? '').split(delimiter)) {
    if (!folder) continue;
    const candidate = join(folder, command);
    try {
      accessSync(candidate, constants.X_OK);
      return candidate;
    } catch {
      // keep looking
    }
  }
  return null;
}

function fromNpm(pkg: string): string | null {
  try {
    const require = createRequire(import.meta.url);
    return (require(pkg) as { path: string }).path;
  } catch {
    return null;
  }
}

let cached: FfmpegBinaries | undefined;

/**
 * Finds ffmpeg and ffprobe: FFMPEG_PATH/FFPROBE_PATH if set, else the system's (Debian's ffmpeg
 * 5.x in CI and the container image), else the static builds that `npm ci` brings as optional
 * dependencies (@ffmpeg-installer/ffmpeg, @ffprobe-installer/ffprobe; older, but they work).
 */
export function locateFfmpeg(): FfmpegBinaries {
  if (cached) return cached;
  if (process.env.FFMPEG_PATH && process.env.FFPROBE_PATH) {
    cached = { ffmpeg: process.env.FFMPEG_PATH, ffprobe: process.env.FFPROBE_PATH, source: 'env' };
    return cached;
  }
  const systemFfmpeg = onPath('ffmpeg');
  const systemFfprobe = onPath('ffprobe');
  if (systemFfmpeg && systemFfprobe) {
    cached = { ffmpeg: systemFfmpeg, ffprobe: systemFfprobe, source: 'system' };
    return cached;
  }
  const npmFfmpeg = fromNpm('@ffmpeg-installer/ffmpeg');
  const npmFfprobe = fromNpm('@ffprobe-installer/ffprobe');
  if (npmFfmpeg && npmFfprobe) {
    cached = { ffmpeg: npmFfmpeg, ffprobe: npmFfprobe, source: 'npm' };
    return cached;
  }
  throw new Error('ffmpeg and ffprobe were not found: install ffmpeg (apt-get install ffmpeg) or set FFMPEG_PATH and FFPROBE_PATH');
}

export interface ProbedStream {
  codec_type: 'video' | 'audio' | 'subtitle' | 'data' | string;
  codec_name?: string;
  width?: number;
  height?: number;
  disposition?: { attached_pic?: number };
  tags?: Record<string, string>;
  side_data_list?: { rotation?: number }[];
}

export interface ProbeResult {
  streams: ProbedStream[];
  format: { format_name?: string; duration?: string; size?: string; tags?: Record<string, string> };
}

/** Runs ffprobe on a file; rejects when ffprobe cannot read it. */
export async function probeMedia(path: string, timeoutMs = 30_000): Promise<ProbeResult> {
  const { ffprobe } = locateFfmpeg();
  const { stdout } = await run(ffprobe, ['-v', 'error', '-print_format', 'json', '-show_format', '-show_streams', path], {
    timeout: timeoutMs,
    maxBuffer: 8 * 1024 * 1024,
  });
  return JSON.parse(stdout) as ProbeResult;
}

/** True when the file has a real picture track (not just cover art). */
export function hasVideoTrack(probe: ProbeResult): boolean {
  return probe.streams.some((stream) => stream.codec_type === 'video' && !stream.disposition?.attached_pic);
}

export function hasAudioTrack(probe: ProbeResult): boolean {
  return probe.streams.some((stream) => stream.codec_type === 'audio');
}
