import { join } from 'node:path';
import { FFMPEG_TIME_LIMIT_SECONDS, type ProbeResult, type ProbedStream } from '@portal/platform';
import {
  FFMPEG_THREADS,
  checkWrittenLength,
  ffmpegCommand,
  outputLimit,
  probedSeconds,
  runFfmpeg,
  type TranscodeWatchdog,
} from './ffmpeg-runner.js';
import { UnprocessableMediaError } from './media-error.js';

export interface VideoOptions {
  /** The demuxer the file was probed with (null: ffmpeg chooses among the media demuxers). */
  demuxer?: string | null;
  /** The longest video taken (seconds), and what the participant is told past it. */
  maxSeconds?: number;
  tooLong?: string;
  /** The niceness ffmpeg runs at (MEDIA_AV_NICE). */
  niceness?: number;
  /** Stops a transcode that runs far past what the video's length predicts. */
  watchdog?: TranscodeWatchdog;
}

/** The options of a display copy, with their defaults (the longest video: ffmpeg's time limit). */
function withDefaults(options: VideoOptions) {
  return {
    demuxer: options.demuxer ?? null,
    maxSeconds: options.maxSeconds ?? FFMPEG_TIME_LIMIT_SECONDS,
    tooLong: options.tooLong ?? 'videos are limited in length',
    niceness: options.niceness ?? 0,
    watchdog: options.watchdog,
  };
}

/** The first picture track that is not cover art, and the first sound track: the only ones used. */
export function chosenStreams(probe: ProbeResult): { video: ProbedStream | undefined; audio: ProbedStream | undefined } {
  return {
    video: probe.streams.find((stream) => stream.codec_type === 'video' && !stream.disposition?.attached_pic),
    audio: probe.streams.find((stream) => stream.codec_type === 'audio'),
  };
}

/**
 * How a display copy's picture is encoded (the 720p copy, and the public copy of a video with its
 * faces blurred): H.264 High at level 4.0, which every browser plays, at a quality that keeps a
 * phone's picture and costs about half the clip's length on two cores (bench/transcode).
 */
export const DISPLAY_VIDEO_ENCODING = ['-c:v', 'libx264', '-preset', 'veryfast', '-crf', '23', '-profile:v', 'high', '-level', '4.0'];

/** `-map 0:<index>` for a probed stream; by type when ffprobe did not number it. */
const mapOf = (stream: ProbedStream, type: 'v' | 'a') => ['-map', typeof stream.index === 'number' ? `0:${stream.index}` : `0:${type}:0`];

/**
 * Any phone or browser video → H.264 (High profile) / AAC in MP4 with the index at the front
 * (faststart, so playback starts before the download ends), at most 720p on its short side,
 * turned upright, with every metadata atom (GPS position included) left out. One picture and
 * one sound track, chosen explicitly; ffmpeg stops a second past the length cap.
 */
export async function transcodeVideo(
  input: string,
  probe: ProbeResult,
  workDir: string,
  onProgress: (percent: number) => void,
  options: VideoOptions = {},
) {
  const { demuxer, maxSeconds, tooLong, niceness, watchdog } = withDefaults(options);
  const { video, audio } = chosenStreams(probe);
  if (!video) throw new UnprocessableMediaError('The file has no picture track');
  const output = join(workDir, 'display.mp4');
  const command = ffmpegCommand(input, demuxer, niceness)
    .outputOptions([
      ...mapOf(video, 'v'),
      ...(audio ? mapOf(audio, 'a') : []),
      '-map_metadata',
      '-1',
      '-map_chapters',
      '-1',
      ...outputLimit(maxSeconds),
      '-vf',
      "scale='if(gte(iw,ih),-2,min(720,iw))':'if(gte(iw,ih),min(720,ih),-2)',format=yuv420p",
      ...DISPLAY_VIDEO_ENCODING,
      ...(audio ? ['-c:a', 'aac', '-b:a', '128k', '-ac', '2'] : ['-an']),
      '-movflags',
      '+faststart',
      '-threads',
      String(FFMPEG_THREADS),
    ])
    .output(output);
  return runVideoCommand(command, output, probe, onProgress, { maxSeconds, tooLong, watchdog });
}

/**
 * The first display copy of a video whose streams every browser plays (see playable.ts): the
 * same picture and sound, not re-encoded (`-c copy`), in a fresh MP4 with the index at the front.
 * Every metadata tag is left out, of the file (`-map_metadata -1`: the position a phone writes,
 * ©xyz or Apple's location key) and of each track (`-map_metadata:s:<n> -1`), chapters too, and
 * every other track (a phone's timed-metadata track of positions); the muxer writes no user data
 * it was not given. The display matrix (rotation) is the track's side data, not a tag: stream
 * copy keeps it, and the browser turns the picture upright as it plays.
 *
 * The picture's own bitstream can carry text too: SEI messages (user data, which some cameras
 * fill with an owner, a serial number or a place; the encoder's settings). The `filter_units`
 * bitstream filter drops every SEI NAL unit of the copied H.264 stream (type 6; the 720p copy
 * is encoded anew and carries none of the original's). SEI is supplementary: no decoder needs it
 * to show the pictures. Debian's ffmpeg and the static fallback npm installs both have the filter.
 */
/** The bitstream filter that drops H.264's SEI NAL units (type 6): their user data may hold text. */
export const H264_WITHOUT_SEI = 'filter_units=remove_types=6';

export async function remuxVideo(
  input: string,
  probe: ProbeResult,
  workDir: string,
  onProgress: (percent: number) => void,
  options: VideoOptions = {},
) {
  const { demuxer, maxSeconds, tooLong, niceness, watchdog } = withDefaults(options);
  const { video, audio } = chosenStreams(probe);
  if (!video) throw new UnprocessableMediaError('The file has no picture track');
  const output = join(workDir, 'display-remuxed.mp4');
  const command = ffmpegCommand(input, demuxer, niceness)
    .outputOptions([
      ...mapOf(video, 'v'),
      ...(audio ? mapOf(audio, 'a') : []),
      '-map_metadata',
      '-1',
      '-map_metadata:s:0',
      '-1',
      ...(audio ? ['-map_metadata:s:1', '-1'] : []),
      '-map_chapters',
      '-1',
      ...outputLimit(maxSeconds),
      '-c',
      'copy',
      '-bsf:v',
      H264_WITHOUT_SEI,
      ...(audio ? [] : ['-an']),
      '-sn',
      '-dn',
      '-f',
      'mp4',
      '-movflags',
      '+faststart',
    ])
    .output(output);
  return runVideoCommand(command, output, probe, onProgress, { maxSeconds, tooLong, watchdog });
}

/** Runs a display copy's ffmpeg command under the watchdog, then checks the length it wrote. */
async function runVideoCommand(
  command: Parameters<typeof runFfmpeg>[0],
  output: string,
  probe: ProbeResult,
  onProgress: (percent: number) => void,
  { maxSeconds, tooLong, watchdog }: { maxSeconds: number; tooLong: string; watchdog: VideoOptions['watchdog'] },
): Promise<string> {
  const { writtenSeconds } = await runFfmpeg(command, {
    durationSeconds: probedSeconds(probe.format.duration),
    onProgress,
    reason: 'the file could not be read as a video',
    ...(watchdog ? { watchdog: { ...watchdog, fallbackSeconds: maxSeconds + 1 } } : {}),
  });
  checkWrittenLength(writtenSeconds, maxSeconds, tooLong);
  return output;
}

/** The moment of a video its poster frame is taken at: a second in, or the first frame of a very short clip. */
export function posterSeconds(durationSeconds: number | null): number {
  return durationSeconds && durationSeconds > 2 ? 1 : 0;
}

/**
 * One frame of a video, a little way in (or the first of a very short clip), as PNG, turned
 * upright (ffmpeg applies the display matrix as it decodes). Taken from the original, with the
 * demuxer it was read with, so the poster exists before any display copy.
 */
export async function posterFrame(
  video: string,
  durationSeconds: number | null,
  workDir: string,
  {
    demuxer = 'mov',
    stream,
    niceness = 0,
    watchdog,
  }: { demuxer?: string | null; stream?: ProbedStream; niceness?: number; watchdog?: TranscodeWatchdog } = {},
): Promise<string> {
  const output = join(workDir, 'poster.png');
  const at = posterSeconds(durationSeconds);
  await runFfmpeg(
    ffmpegCommand(video, demuxer, niceness)
      .seekInput(at)
      .outputOptions([...(stream ? mapOf(stream, 'v') : ['-map', '0:v:0']), '-frames:v', '1', '-map_metadata', '-1'])
      .output(output),
    {
      reason: 'no picture could be taken from the video',
      // One frame: the slack alone is its allowance.
      ...(watchdog ? { durationSeconds: 0, watchdog } : {}),
    },
  );
  return output;
}
