import { accessSync, constants } from 'node:fs';
import { createRequire } from 'node:module';
import { delimiter, join } from 'node:path';
import { fileInput, mediaInputOptions } from './media-containers.js';
import { execFileOffThread } from './off-thread-exec.js';

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

const cache = new Map<string, { path: string; source: FfmpegBinaries['source'] }>();

/** The environment is read on every call (FFMPEG_PATH may name another build); the search of PATH and npm is done once. */
function locate(command: 'ffmpeg' | 'ffprobe', envName: string, npmPackage: string): { path: string; source: FfmpegBinaries['source'] } {
  const fromEnv = process.env[envName];
  if (fromEnv) return { path: fromEnv, source: 'env' };
  const known = cache.get(command);
  if (known) return known;
  const system = onPath(command);
  const npm = system ? null : fromNpm(npmPackage);
  const found = system ? { path: system, source: 'system' as const } : npm ? { path: npm, source: 'npm' as const } : null;
  if (!found) throw new Error(`${command} was not found: install ffmpeg (apt-get install ffmpeg) or set ${envName}`);
  cache.set(command, found);
  return found;
}

/** ffprobe: FFPROBE_PATH, else the system's, else @ffprobe-installer/ffprobe from npm. */
export function locateFfprobe(): string {
  return locate('ffprobe', 'FFPROBE_PATH', '@ffprobe-installer/ffprobe').path;
}

/**
 * Finds ffmpeg and ffprobe: FFMPEG_PATH/FFPROBE_PATH if set, else the system's (Debian's ffmpeg
 * 5.x in CI and the container image), else the static builds that `npm ci` brings as optional
 * dependencies (@ffmpeg-installer/ffmpeg, @ffprobe-installer/ffprobe; older, but they work).
 */
export function locateFfmpeg(): FfmpegBinaries {
  const ffmpeg = locate('ffmpeg', 'FFMPEG_PATH', '@ffmpeg-installer/ffmpeg');
  return { ffmpeg: ffmpeg.path, ffprobe: locateFfprobe(), source: ffmpeg.source };
}

export interface ProbedStream {
  /** The stream's number in the file (what `-map 0:<index>` names). */
  index?: number;
  codec_type: 'video' | 'audio' | 'subtitle' | 'data' | string;
  codec_name?: string;
  /** The sample entry's four letters in an MP4/MOV ("avc1", "hvc1", "mp4a"...). */
  codec_tag_string?: string;
  /** The codec's profile as ffprobe names it ("High", "Main", "Constrained Baseline"; "LC" for AAC). */
  profile?: string;
  /** H.264's level times ten (42 is level 4.2); -99 when unknown. */
  level?: number;
  /** The picture's pixel format ("yuv420p", "yuv420p10le"...). */
  pix_fmt?: string;
  /** "progressive", or how the fields of an interlaced picture are ordered; absent when unknown. */
  field_order?: string;
  channels?: number;
  sample_rate?: string;
  width?: number;
  height?: number;
  /** Frames a second over the stream, as a fraction ("30000/1001"); "0/0" when unknown. */
  avg_frame_rate?: string;
  disposition?: { attached_pic?: number };
  tags?: Record<string, string>;
  side_data_list?: { rotation?: number }[];
}

export interface ProbeResult {
  streams: ProbedStream[];
  format: { format_name?: string; duration?: string; size?: string; tags?: Record<string, string> };
}

export interface ProbeOptions {
  /**
   * The demuxer to read the file with (see media-containers.ts): the one the upload check chose.
   * Without it ffprobe may choose, but only among the media demuxers.
   */
  demuxer?: string | null;
  timeoutMs?: number;
}

/**
 * Runs ffprobe on a local file, with the demuxer named and nothing but local files allowed;
 * rejects when ffprobe cannot read it.
 */
export async function probeMedia(path: string, { demuxer = null, timeoutMs = 30_000 }: ProbeOptions = {}): Promise<ProbeResult> {
  // From a worker thread: starting a process blocks the calling thread (see off-thread-exec.ts).
  const stdout = await execFileOffThread(
    locateFfprobe(),
    ['-v', 'error', ...mediaInputOptions(demuxer), '-print_format', 'json', '-show_format', '-show_streams', fileInput(path)],
    { timeout: timeoutMs, maxBuffer: 8 * 1024 * 1024 },
  );
  return JSON.parse(stdout) as ProbeResult;
}

/** True when the file has a real picture track (not just cover art). */
export function hasVideoTrack(probe: ProbeResult): boolean {
  return probe.streams.some((stream) => stream.codec_type === 'video' && !stream.disposition?.attached_pic);
}

export function hasAudioTrack(probe: ProbeResult): boolean {
  return probe.streams.some((stream) => stream.codec_type === 'audio');
}
