import { join } from 'node:path';
import { ffmpegCommand, runFfmpeg } from './ffmpeg-runner.js';
import { UnprocessableMediaError } from './media-error.js';

/**
 * Any recording (Chrome's WebM/Opus, Safari's MP4/AAC, phone M4A, MP3, WAV...) → AAC in an M4A
 * file with the index at the front: the one format both Chrome and Safari play. No metadata.
 * Returns the file and its length as ffmpeg reports having written it.
 *
 * One ffmpeg process and nothing else: the evidence service classified the upload as a recording
 * with ffprobe already, and ffmpeg itself says when there is no sound track or the file cannot be
 * read. (An ffprobe before and after cost as much as a fifth of a minute of voice's processing.)
 */
export async function transcodeAudio(input: string, workDir: string, onProgress: (percent: number) => void) {
  const output = join(workDir, 'display.m4a');
  const command = ffmpegCommand(input)
    .outputOptions([
      '-map', '0:a:0',
      '-vn',
      '-map_metadata', '-1',
      '-map_chapters', '-1',
      '-c:a', 'aac',
      '-b:a', '128k',
      '-movflags', '+faststart',
    ])
    .format('ipod')
    .output(output);
  const { writtenSeconds } = await runFfmpeg(command, { onProgress }).catch((error: unknown) => {
    if (error instanceof UnprocessableMediaError && /Stream map '0:a:0' matches no streams/.test(error.message)) {
      throw new UnprocessableMediaError('The file has no sound track');
    }
    throw error;
  });
  return { output, durationSeconds: writtenSeconds };
}
