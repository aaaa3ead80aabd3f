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

/** Runs a command to completion; ffmpeg's own complaint becomes an UnprocessableMediaError. */
export function runFfmpeg(command: ffmpeg.FfmpegCommand, onProgress?: (percent: number) => void): Promise<void> {
  return new Promise((resolve, reject) => {
    command
      .on('progress', (progress: { percent?: number }) => {
        if (onProgress && typeof progress.percent === 'number' && Number.isFinite(progress.percent)) {
          onProgress(Math.max(0, Math.min(99, progress.percent)));
        }
      })
      .on('end', () => resolve())
      .on('error', (error: Error, _stdout: string | null, stderr: string | null) => {
        const detail = (stderr ?? '').trim().split('\n').slice(-3).join(' ').slice(0, 300);
        reject(new UnprocessableMediaError(detail || error.message));
      })
      .run();
  });
}
