import { join } from 'node:path';
import { hasVideoTrack, type ProbeResult } from '@portal/platform';
import { ffmpegCommand, probedSeconds, runFfmpeg } from './ffmpeg-runner.js';
import { UnprocessableMediaError } from './media-error.js';

/**
 * Any phone or browser video → H.264 (High profile) / AAC in MP4 with the index at the front
 * (faststart, so playback starts before the download ends), at most 720p on its short side,
 * turned upright, with every metadata atom (GPS position included) left out.
 */
export async function transcodeVideo(input: string, probe: ProbeResult, workDir: string, onProgress: (percent: number) => void) {
  if (!hasVideoTrack(probe)) throw new UnprocessableMediaError('The file has no picture track');
  const output = join(workDir, 'display.mp4');
  const hasAudio = probe.streams.some((stream) => stream.codec_type === 'audio');
  const command = ffmpegCommand(input)
    .outputOptions([
      '-map', '0:v:0',
      ...(hasAudio ? ['-map', '0:a:0'] : []),
      '-map_metadata', '-1',
      '-map_chapters', '-1',
      '-vf', "scale='if(gte(iw,ih),-2,min(720,iw))':'if(gte(iw,ih),min(720,ih),-2)',format=yuv420p",
      '-c:v', 'libx264',
      '-preset', 'veryfast',
      '-crf', '23',
      '-profile:v', 'high',
      '-level', '4.0',
      ...(hasAudio ? ['-c:a', 'aac', '-b:a', '128k', '-ac', '2'] : ['-an']),
      '-movflags', '+faststart',
      '-threads', '2',
    ])
    .output(output);
  await runFfmpeg(command, { durationSeconds: probedSeconds(probe.format.duration), onProgress });
  return output;
}

/** One frame, a little way in (or the first of a very short clip), as PNG. */
export async function posterFrame(video: string, durationSeconds: number | null, workDir: string): Promise<string> {
  const output = join(workDir, 'poster.png');
  const at = durationSeconds && durationSeconds > 2 ? 1 : 0;
  await runFfmpeg(ffmpegCommand(video).seekInput(at).outputOptions(['-frames:v', '1', '-map_metadata', '-1']).output(output));
  return output;
}
