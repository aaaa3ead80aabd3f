import ffmpeg from 'fluent-ffmpeg';
import { locateFfmpeg } from '@portal/platform';
import { UnprocessableMediaError } from './media-error.js';

let configured = false;

/** fluent-ffmpeg pointed at the binaries locateFfmpeg found (system first, npm fallback). */
export function ffmpegCommand(input: string): ffmpeg.FfmpegCommand {
  if (!configured) {
    const { ffmpeg: ffmpegPath, ffprobe } = locateFfmpeg();
    ffmpeg.setFfmpegPath(ffmpegPath);
    ffmpeg.setFfprobePath(ffprobe);
    configured = true;
  }
  // Phones record long videos; a job that runs away is stopped after half an hour.
  return ffmpeg(input, { timeout: 30 * 60 });
}

export interface RunOptions {
  /** The input's length (from the probe the worker already made): turns progress into a percentage. */
  durationSeconds?: number | null;
  onProgress?: (percent: number) => void;
}

export interface RunOutcome {
  /** The position of ffmpeg's last progress line (`time=`): the length of what it wrote, in seconds. */
  writtenSeconds: number | null;
}

const TIME_MARK = /time=(\d+):(\d{2}):(\d{2}(?:\.\d+)?)/;

/**
 * Runs a command to completion; ffmpeg's own complaint becomes an UnprocessableMediaError.
 *
 * Progress is read from ffmpeg's stderr lines (`time=`) against the duration the worker already
 * knows. fluent-ffmpeg's own 'progress' event is not used: listening to it makes fluent-ffmpeg
 * start an ffprobe of the input beside every ffmpeg run, just for the percentage, which cost
 * about a fifth of a minute of voice's whole processing time (bench/transcode).
 */
export function runFfmpeg(command: ffmpeg.FfmpegCommand, { durationSeconds, onProgress }: RunOptions = {}): Promise<RunOutcome> {
  let writtenSeconds: number | null = null;
  return new Promise((resolve, reject) => {
    command
      .on('stderr', (line: string) => {
        const mark = TIME_MARK.exec(line);
        if (!mark) return;
        writtenSeconds = Number(mark[1]) * 3600 + Number(mark[2]) * 60 + Number(mark[3]);
        if (onProgress && durationSeconds && durationSeconds > 0) {
          onProgress(Math.max(0, Math.min(99, (writtenSeconds / durationSeconds) * 100)));
        }
      })
      .on('end', () => resolve({ writtenSeconds }))
      .on('error', (error: Error, _stdout: string | null, stderr: string | null) => {
        const detail = (stderr ?? '').trim().split('\n').slice(-3).join(' ').slice(0, 300);
        reject(new UnprocessableMediaError(detail || error.message));
      })
      .run();
  });
}

/** A probe's duration in seconds, or null when the container does not say (e.g. a browser's WebM recording). */
export function probedSeconds(duration: string | undefined): number | null {
  const seconds = Number(duration);
  return Number.isFinite(seconds) && seconds > 0 ? seconds : null;
}
