import { join } from 'node:path';
import { ffmpegCommand, outputLimit, checkWrittenLength, runFfmpeg, type TranscodeWatchdog } from './ffmpeg-runner.js';
import { UnprocessableMediaError } from './media-error.js';

export interface AudioOptions {
  /** The demuxer the upload check read the file with (null: ffmpeg chooses among the media demuxers). */
  demuxer?: string | null;
  /** The longest recording taken (seconds), and what the participant is told past it. */
  maxSeconds?: number;
  tooLong?: string;
  /** The niceness ffmpeg runs at (MEDIA_AV_NICE). */
  niceness?: number;
  /** Stops a transcode that runs far past what the recording's length predicts. */
  watchdog?: TranscodeWatchdog;
}

/**
 * Any recording (Chrome's WebM/Opus, Safari's MP4/AAC, phone M4A, MP3, WAV...) → AAC in an M4A
 * file with the index at the front: the one format both Chrome and Safari play. No metadata.
 * Returns the file and its length as ffmpeg reports having written it.
 *
 * One ffmpeg process and nothing else: the evidence service classified the upload as a recording
 * with ffprobe already (and refused it if it said it was over the cap), and ffmpeg itself says
 * when there is no sound track or the file cannot be read. (An ffprobe before and after cost as
 * much as a fifth of a minute of voice's processing.) ffmpeg stops a second past the cap, so a
 * file that does not say its length cannot run on: what it wrote past the cap fails the job.
 */
export async function transcodeAudio(
  input: string,
  workDir: string,
  onProgress: (percent: number) => void,
  { demuxer = null, maxSeconds = 14_400, tooLong = 'recordings are limited in length', niceness = 0, watchdog }: AudioOptions = {},
) {
  const output = join(workDir, 'display.m4a');
  const command = ffmpegCommand(input, demuxer, niceness)
    .outputOptions([
      '-map',
      '0:a:0',
      '-vn',
      '-map_metadata',
      '-1',
      '-map_chapters',
      '-1',
      ...outputLimit(maxSeconds),
      '-c:a',
      'aac',
      '-b:a',
      '128k',
      '-movflags',
      '+faststart',
    ])
    .format('ipod')
    .output(output);
  const { writtenSeconds } = await runFfmpeg(command, {
    onProgress,
    reason: 'the file could not be read as a recording',
    ...(watchdog ? { watchdog: { ...watchdog, fallbackSeconds: maxSeconds + 1 } } : {}),
  }).catch((error: unknown) => {
    if (error instanceof UnprocessableMediaError && /Stream map '0:a:0' matches no streams/.test(error.detail ?? '')) {
      throw new UnprocessableMediaError('The file has no sound track', error.detail);
    }
    throw error;
  });
  checkWrittenLength(writtenSeconds, maxSeconds, tooLong);
  return { output, durationSeconds: writtenSeconds };
}
