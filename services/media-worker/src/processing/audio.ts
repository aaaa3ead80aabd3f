import { join } from 'node:path';
import { hasAudioTrack, type ProbeResult } from '@portal/platform';
import { ffmpegCommand, probedSeconds, runFfmpeg } from './ffmpeg-runner.js';
import { UnprocessableMediaError } from './media-error.js';

/**
 * Any recording (Chrome's WebM/Opus, Safari's MP4/AAC, phone M4A, MP3, WAV...) → AAC in an M4A
 * file with the index at the front: the one format both Chrome and Safari play. No metadata.
 * Returns the file and its length as ffmpeg reports having written it.
 */
export async function transcodeAudio(input: string, probe: ProbeResult, workDir: string, onProgress: (percent: number) => void) {
  if (!hasAudioTrack(probe)) throw new UnprocessableMediaError('The file has no sound track');
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
  const { writtenSeconds } = await runFfmpeg(command, { durationSeconds: probedSeconds(probe.format.duration), onProgress });
  return { output, durationSeconds: writtenSeconds };
}
