import ffmpeg from 'fluent-ffmpeg';
import { FFMPEG_TIME_LIMIT_SECONDS, fileInput, locateFfmpeg, mediaInputOptions } from '@portal/platform';
import { UnprocessableMediaError } from './media-error.js';

/**
 * Threads one ffmpeg run decodes and filters with (libx264 encodes with as many: video.ts). Left
 * to itself ffmpeg sizes both by the cores it sees, which in a pod are the node's, not the pod's
 * CPU limit: on a large node a 4K HEVC decoder holds a frame per thread. A 3 s 4K HEVC clip to
 * 720p on this project's machine: 287 MB resident with 2 decoder threads, 429 MB with 8, 633 MB
 * with 16 (0.88 GB was measured in a pod on a larger node). The audio/video workers request
 * memory for two such runs (a first copy and a 720p copy at once): docs/OPERATIONS.md.
 */
export const FFMPEG_THREADS = 2;

/**
 * fluent-ffmpeg pointed at the binaries locateFfmpeg finds (system first, npm fallback), reading
 * a local file with the given demuxer and no other, and no protocol but `file` (see
 * media-containers.ts in the platform), decoding and filtering with FFMPEG_THREADS threads.
 * Without a demuxer ffmpeg chooses among the media demuxers only. With a niceness, ffmpeg is
 * started through `nice -n` (coreutils), at a lower priority than the worker.
 */
export function ffmpegCommand(input: string, demuxer: string | null, niceness = 0): ffmpeg.FfmpegCommand {
  const { ffmpeg: ffmpegPath, ffprobe } = locateFfmpeg();
  // Phones record long videos; a job that runs away is stopped after half an hour (the longest
  // video taken, MEDIA_MAX_VIDEO_SECONDS, converts within it: media-caps.ts).
  return ffmpeg(fileInput(input), { timeout: FFMPEG_TIME_LIMIT_SECONDS, niceness })
    .setFfmpegPath(ffmpegPath)
    .setFfprobePath(ffprobe)
    .inputOptions(['-threads', String(FFMPEG_THREADS), '-filter_threads', String(FFMPEG_THREADS), ...mediaInputOptions(demuxer)]);
}

/**
 * How long an ffmpeg run may take for the length of what it reads: `factor` × the input's length
 * + `slackSeconds` (MEDIA_TRANSCODE_TIME_FACTOR, MEDIA_TRANSCODE_SLACK_SECONDS). A phone's video
 * transcodes in about half its length on two cores (bench/transcode: 1080p, a minute, 31 s); a
 * file crafted to cost far more than its length says (a few seconds declared, minutes of decoding)
 * is stopped there instead of holding an audio/video worker until the half-hour timeout.
 */
export interface TranscodeWatchdog {
  factor: number;
  slackSeconds: number;
}

export const DEFAULT_TRANSCODE_WATCHDOG: TranscodeWatchdog = { factor: 10, slackSeconds: 120 };

/** What the participant is told when the watchdog stopped ffmpeg (after "The file could not be processed: "). */
export const TOO_SLOW_REASON = 'it took far longer to convert than a file of its length should';

export interface RunOptions {
  /** What the participant is told when ffmpeg fails. */
  reason?: string;
  /** The input's length if already known; otherwise taken from ffmpeg's own `Duration:` line. */
  durationSeconds?: number | null;
  /** 0-99 while ffmpeg works, when the input's length is known. */
  onProgress?: (percent: number) => void;
  /**
   * Stops ffmpeg when it runs longer than the watchdog allows for the input's length; for an input
   * that does not say its length, `fallbackSeconds` (the length cap, past which ffmpeg stops anyway).
   */
  watchdog?: TranscodeWatchdog & { fallbackSeconds?: number };
}

export interface RunOutcome {
  /** The position of ffmpeg's last progress line (`time=`): the length of what it wrote, in seconds. */
  writtenSeconds: number | null;
}

const TIME_MARK = /time=(\d+):(\d{2}):(\d{2}(?:\.\d+)?)/;
const INPUT_DURATION = /^\s*Duration: (\d+):(\d{2}):(\d{2}(?:\.\d+)?)/;
const seconds = (mark: RegExpExecArray) => Number(mark[1]) * 3600 + Number(mark[2]) * 60 + Number(mark[3]);

/**
 * Runs a command to completion; ffmpeg's own complaint becomes an UnprocessableMediaError whose
 * message is `reason` (shown to the participant) and whose detail is ffmpeg's last lines (logged).
 *
 * Progress is read from ffmpeg's stderr lines (`time=`) against the input's duration. fluent-ffmpeg's
 * own 'progress' event is not used: listening to it makes fluent-ffmpeg start an ffprobe of the
 * input beside every ffmpeg run, only for the percentage, which was about a fifth of the whole
 * processing time of a minute of voice (bench/transcode).
 */
export function runFfmpeg(
  command: ffmpeg.FfmpegCommand,
  { durationSeconds = null, onProgress, reason = 'the file could not be converted', watchdog }: RunOptions = {},
): Promise<RunOutcome> {
  let duration = durationSeconds;
  let writtenSeconds: number | null = null;
  const started = Date.now();
  /** Set when the watchdog stopped ffmpeg: what it allowed, for the log. */
  let stopped: string | null = null;
  let deadline: NodeJS.Timeout | null = null;
  /**
   * (Re)sets the watchdog's deadline from what is known of the input's length: at the start, and
   * again when ffmpeg's own Duration line says it. A deadline rather than a periodic check, so a
   * run past it is stopped whatever its speed, and one that ends first is judged all the same.
   */
  const arm = () => {
    if (!watchdog || stopped !== null) return;
    const length = duration ?? watchdog.fallbackSeconds ?? null;
    if (length === null) return;
    if (deadline) clearTimeout(deadline);
    const allowedMs = (watchdog.factor * length + watchdog.slackSeconds) * 1000;
    deadline = setTimeout(
      () => {
        stopped = `stopped after ${Date.now() - started} ms: ${length} s of input allow ${Math.round(allowedMs)} ms (${watchdog.factor} × length + ${watchdog.slackSeconds} s)`;
        command.kill('SIGKILL');
      },
      Math.max(0, allowedMs - (Date.now() - started)),
    );
    deadline.unref();
  };
  const disarm = () => {
    if (deadline) clearTimeout(deadline);
  };
  arm();
  return new Promise((resolve, reject) => {
    command
      .on('stderr', (line: string) => {
        if (duration === null) {
          const input = INPUT_DURATION.exec(line);
          if (input) {
            duration = seconds(input) || null;
            arm();
          }
        }
        const mark = TIME_MARK.exec(line);
        if (!mark) return;
        writtenSeconds = seconds(mark);
        if (onProgress && duration) onProgress(Math.max(0, Math.min(99, (writtenSeconds / duration) * 100)));
      })
      .on('end', () => {
        disarm();
        if (stopped !== null) reject(new UnprocessableMediaError(TOO_SLOW_REASON, stopped));
        else resolve({ writtenSeconds });
      })
      .on('error', (error: Error, _stdout: string | null, stderr: string | null) => {
        disarm();
        if (stopped !== null) return reject(new UnprocessableMediaError(TOO_SLOW_REASON, stopped));
        const detail = (stderr ?? '').trim().split('\n').slice(-3).join(' ').slice(0, 300);
        reject(new UnprocessableMediaError(reason, detail || error.message));
      })
      .run();
  });
}

/** A probe's duration in seconds, or null when the container does not say (e.g. a browser's WebM recording). */
export function probedSeconds(duration: string | undefined): number | null {
  const value = Number(duration);
  return Number.isFinite(value) && value > 0 ? value : null;
}

/**
 * The output length ffmpeg is allowed to write: a second past the cap, so that a file that does
 * not say its length (or lies about it) is stopped there and found to be over the cap.
 */
export function outputLimit(maxSeconds: number): string[] {
  return ['-t', String(maxSeconds + 1)];
}

/** Throws when what ffmpeg wrote is longer than the cap (the file ran past it). */
export function checkWrittenLength(writtenSeconds: number | null, maxSeconds: number, tooLong: string): void {
  if (writtenSeconds !== null && writtenSeconds > maxSeconds) {
    throw new UnprocessableMediaError(tooLong, `ffmpeg wrote ${writtenSeconds} s, the cap is ${maxSeconds} s`);
  }
}
