import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import type { Readable, Writable } from 'node:stream';
import { faceBoxesAt, type FaceRegion } from '@portal/contracts';
import { fileInput, locateFfmpeg, mediaInputOptions } from '@portal/platform';
import { UnprocessableMediaError } from '../processing/media-error.js';
import { TOO_SLOW_REASON } from '../processing/ffmpeg-runner.js';
import { DISPLAY_VIDEO_ENCODING } from '../processing/video.js';
import type { FaceDetector } from './face-detector.js';
import { trackFaces, type FaceSample } from './face-tracks.js';
import { pixelateFaces } from './pixelate.js';

/** The longest side of the frames handed to the detector (it looks at 512x512 whatever it gets). */
export const VIDEO_DETECTION_SIZE = 640;

export interface VideoRunOptions {
  /** The niceness ffmpeg runs at (MEDIA_AV_NICE). */
  niceness: number;
  /** Stops the work when it runs longer than this (the transcode watchdog's allowance for the video's length). */
  allowedMs: number;
}

/** An ffmpeg process reading our own 720p copy (an MP4), started at the given niceness. */
function ffmpeg(args: string[], niceness: number): ChildProcess {
  const binary = locateFfmpeg().ffmpeg;
  const command = niceness > 0 ? ['nice', '-n', String(niceness), binary] : [binary];
  return spawn(command[0]!, [...command.slice(1), '-nostdin', '-v', 'error', ...args], { stdio: ['pipe', 'pipe', 'pipe'] });
}

/** ffmpeg decoding the picture of our own MP4 to raw frames on its stdout, through a filter. */
function rawFrames(video: string, filter: string, pixelFormat: 'rgb24' | 'yuv420p', niceness: number): ChildProcess {
  const decoder = ffmpeg(
    [
      ...mediaInputOptions('mov'),
      '-i',
      fileInput(video),
      '-map',
      '0:v:0',
      '-vf',
      filter,
      '-f',
      'rawvideo',
      '-pix_fmt',
      pixelFormat,
      'pipe:1',
    ],
    niceness,
  );
  decoder.stdin!.end();
  return decoder;
}

/** Runs `work` with the processes, killing them when the allowance runs out or anything fails. */
async function supervised<T>(processes: ChildProcess[], allowedMs: number, work: () => Promise<T>): Promise<T> {
  const stderr = processes.map(() => '');
  processes.forEach((child, index) =>
    child.stderr!.on('data', (chunk: Buffer) => (stderr[index] = (stderr[index] + chunk.toString()).slice(-2000))),
  );
  let timedOut = false;
  const timer = setTimeout(() => {
    timedOut = true;
    for (const child of processes) child.kill('SIGKILL');
  }, allowedMs);
  timer.unref();
  try {
    const exits = processes.map((child) => once(child, 'close') as Promise<[number | null, NodeJS.Signals | null]>);
    const result = await work();
    const codes = await Promise.all(exits);
    const failed = codes.findIndex(([code]) => code !== 0);
    if (timedOut) throw new UnprocessableMediaError(TOO_SLOW_REASON, `face work stopped after ${allowedMs} ms`);
    if (failed >= 0) throw new UnprocessableMediaError('the video could not be read for faces', stderr[failed]!.trim().slice(-300));
    return result;
  } catch (error) {
    for (const child of processes) child.kill('SIGKILL');
    if (timedOut) throw new UnprocessableMediaError(TOO_SLOW_REASON, `face work stopped after ${allowedMs} ms`);
    throw error;
  } finally {
    clearTimeout(timer);
  }
}

/** Reads a stream of raw frames of `size` bytes, one at a time. */
async function* frames(stream: Readable, size: number): AsyncGenerator<Buffer> {
  let pending: Buffer[] = [];
  let length = 0;
  for await (const chunk of stream as AsyncIterable<Buffer>) {
    pending.push(chunk);
    length += chunk.length;
    while (length >= size) {
      const joined = Buffer.concat(pending, length);
      yield joined.subarray(0, size);
      const rest = joined.subarray(size);
      pending = rest.length > 0 ? [Buffer.from(rest)] : [];
      length = rest.length;
    }
  }
}

/** Writes a frame, waiting while the encoder's pipe is full; fails if the encoder is gone. */
async function write(stream: Writable, data: Buffer): Promise<void> {
  if (stream.write(data)) return;
  await new Promise<void>((resolve, reject) => {
    const settle = (error?: Error) => {
      stream.off('drain', drained);
      stream.off('close', closed);
      if (error) reject(error);
      else resolve();
    };
    const drained = () => settle();
    const closed = () => settle(new Error('the encoder stopped reading'));
    stream.on('drain', drained);
    stream.on('close', closed);
  });
}

/** A frame size for the detector: the picture's shape, at most VIDEO_DETECTION_SIZE on its longest side, even. */
function detectionSize(width: number, height: number): { width: number; height: number } {
  const scale = Math.min(1, VIDEO_DETECTION_SIZE / Math.max(width, height));
  const even = (value: number) => Math.max(2, Math.round((value * scale) / 2) * 2);
  return { width: even(width), height: even(height) };
}

/**
 * The faces of a video (an upright copy: the 720p display copy), `samplesPerSecond` frames a second
 * handed to the detector, joined into regions that follow each face (trackFaces).
 */
export async function videoFaces(
  detector: FaceDetector,
  video: string,
  picture: { width: number; height: number },
  samplesPerSecond: number,
  options: VideoRunOptions,
): Promise<{ regions: FaceRegion[]; interval: number; samples: number }> {
  const size = detectionSize(picture.width, picture.height);
  const interval = 1 / samplesPerSecond;
  const decoder = rawFrames(video, `fps=${samplesPerSecond},scale=${size.width}:${size.height}`, 'rgb24', options.niceness);
  const samples: FaceSample[] = [];
  await supervised([decoder], options.allowedMs, async () => {
    let index = 0;
    for await (const frame of frames(decoder.stdout!, size.width * size.height * 3)) {
      samples.push({ t: index * interval, faces: await detector.detect(frame, size.width, size.height) });
      index++;
    }
  });
  return { regions: trackFaces(samples, interval), interval, samples: samples.length };
}

/**
 * The public copy of a video: every frame of the (upright, 720p) display copy with the faces the
 * regions cover at its moment pixelated, encoded as the display copy is (H.264 High, faststart),
 * its sound copied. The frames go through this process as raw YUV 4:2:0: each plane is pixelated
 * with the same rule as a photo (the chroma planes at half size).
 */
export async function blurredVideo(
  video: string,
  output: string,
  regions: readonly FaceRegion[],
  interval: number,
  picture: { width: number; height: number; frameRate: string; hasAudio: boolean },
  options: VideoRunOptions,
): Promise<string> {
  const { width, height, frameRate } = picture;
  const [numerator, denominator = '1'] = frameRate.split('/');
  const fps = Number(numerator) / Number(denominator);
  if (!Number.isFinite(fps) || fps <= 0 || width % 2 || height % 2) {
    throw new UnprocessableMediaError('the video could not be read for faces', `frame rate ${frameRate}, ${width}x${height}`);
  }
  const decoder = rawFrames(video, `fps=${frameRate}`, 'yuv420p', options.niceness);
  const encoder = ffmpeg(
    [
      '-f',
      'rawvideo',
      '-pix_fmt',
      'yuv420p',
      '-s',
      `${width}x${height}`,
      '-r',
      frameRate,
      '-i',
      'pipe:0',
      ...mediaInputOptions('mov'),
      '-i',
      fileInput(video),
      '-map',
      '0:v:0',
      ...(picture.hasAudio ? ['-map', '1:a:0', '-c:a', 'copy'] : ['-an']),
      '-map_metadata',
      '-1',
      ...DISPLAY_VIDEO_ENCODING,
      '-pix_fmt',
      'yuv420p',
      '-movflags',
      '+faststart',
      '-threads',
      '2',
      '-y',
      output,
    ],
    options.niceness,
  );
  // A write to an encoder that died fails (EPIPE): its exit code says why (supervised).
  encoder.stdin!.on('error', () => undefined);
  const luma = width * height;
  const chroma = luma / 4;
  await supervised([decoder, encoder], options.allowedMs, async () => {
    let index = 0;
    for await (const frame of frames(decoder.stdout!, luma + 2 * chroma)) {
      const boxes = faceBoxesAt(regions, index / fps, interval);
      if (boxes.length > 0) {
        pixelateFaces({ data: frame.subarray(0, luma), width, height, channels: 1 }, boxes);
        pixelateFaces({ data: frame.subarray(luma, luma + chroma), width: width / 2, height: height / 2, channels: 1 }, boxes);
        pixelateFaces({ data: frame.subarray(luma + chroma), width: width / 2, height: height / 2, channels: 1 }, boxes);
      }
      await write(encoder.stdin!, frame);
      index++;
    }
    encoder.stdin!.end();
  });
  return output;
}
