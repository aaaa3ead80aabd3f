import { execFile } from 'node:child_process';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { locateFfmpeg } from '@portal/platform';
import { phoneJpeg } from './media.js';

const run = promisify(execFile);

export interface MediaFixtures {
  /** A phone-like JPEG with GPS EXIF and orientation 6. */
  jpegWithGps: string;
  /** 3 s, 1280x720 rotated 90° by metadata (as phones do), H.264 + AAC, with a GPS location tag. */
  phoneMp4: string;
  /** 2 s, 1920x1080 VP8 + Opus WebM (a browser's video recording). */
  browserWebm: string;
  /** 2 s Opus in WebM, audio only (Chrome's MediaRecorder). */
  chromeAudioWebm: string;
  /** 2 s AAC in M4A (Safari's recorder, phone voice memos). */
  voiceMemoM4a: string;
  /** 2 s MP3. */
  mp3: string;
  /** The first half of phoneMp4: cut off mid-upload. */
  truncatedMp4: string;
  /** Plain text with a .mp4 name. */
  textAsMp4: string;
  /** 12 s MP3 at 192 kbit/s (about 290 KB), for size limits. */
  longMp3: string;
  /** A JPEG whose header is fine but whose picture data is garbage: it passes inspection, then cannot be decoded. */
  corruptJpeg: string;
}

async function ffmpeg(args: string[]): Promise<void> {
  await run(locateFfmpeg().ffmpeg, ['-v', 'error', '-y', ...args], { timeout: 60_000 });
}

export interface TestVideo {
  /** Width x height, e.g. 1920x1080. */
  size: string;
  rate: number;
  seconds: number;
  /** H.264 (yuv420p) as most phones and browsers record, or HEVC tagged hvc1 as an iPhone does. */
  codec?: 'h264' | 'hevc';
  /** The AAC sound track's tone (Hz). */
  tone?: number;
}

/**
 * A phone-like video made with ffmpeg: a moving test picture and a tone in AAC, at the given
 * size, rate and length, written to `path` (its container follows the extension: .mp4, .mov).
 * Long 1080p ones are for tests that need a transcode still running when they act: encoding them
 * costs seconds of CPU, so make them no longer than the test needs.
 */
export async function makeTestVideo(path: string, { size, rate, seconds, codec = 'h264', tone = 440 }: TestVideo): Promise<string> {
  const video =
    codec === 'h264'
      ? ['-c:v', 'libx264', '-preset', 'ultrafast', '-pix_fmt', 'yuv420p']
      : ['-c:v', 'libx265', '-preset', 'ultrafast', '-x265-params', 'log-level=error', '-tag:v', 'hvc1'];
  await run(
    locateFfmpeg().ffmpeg,
    [
      '-v',
      'error',
      '-y',
      '-f',
      'lavfi',
      '-i',
      `testsrc2=size=${size}:rate=${rate}:duration=${seconds}`,
      '-f',
      'lavfi',
      '-i',
      `sine=frequency=${tone}:duration=${seconds}`,
      ...video,
      '-c:a',
      'aac',
      '-shortest',
      path,
    ],
    { timeout: 120_000 },
  );
  return path;
}

/**
 * Real media, made in the test setup with ffmpeg and sharp (nothing binary is committed): what
 * phones and browsers upload, including the metadata the portal must strip.
 */
export async function makeMediaFixtures(dir: string): Promise<MediaFixtures> {
  mkdirSync(dir, { recursive: true });
  const path = (name: string) => join(dir, name);
  writeFileSync(path('photo.jpg'), await phoneJpeg({ width: 800, height: 600, orientation: 6 }));
  await ffmpeg([
    '-f',
    'lavfi',
    '-i',
    'testsrc2=size=1280x720:rate=25:duration=3',
    '-f',
    'lavfi',
    '-i',
    'sine=frequency=440:duration=3',
    '-c:v',
    'libx264',
    '-preset',
    'ultrafast',
    '-pix_fmt',
    'yuv420p',
    '-c:a',
    'aac',
    '-shortest',
    '-metadata',
    'location=+40.7128-074.0060/',
    '-metadata',
    'com.apple.quicktime.location.ISO6709=+40.7128-074.0060/',
    path('phone-upright.mp4'),
  ]);
  // A phone stores portrait video as landscape frames plus a display rotation (set on a remux).
  await ffmpeg(['-i', path('phone-upright.mp4'), '-c', 'copy', '-map_metadata', '0', '-metadata:s:v:0', 'rotate=90', path('phone.mp4')]);
  await ffmpeg([
    '-f',
    'lavfi',
    '-i',
    'testsrc=size=1920x1080:rate=15:duration=2',
    '-f',
    'lavfi',
    '-i',
    'sine=frequency=330:duration=2',
    '-c:v',
    'libvpx',
    '-deadline',
    'realtime',
    '-b:v',
    '300k',
    '-c:a',
    'libopus',
    '-shortest',
    path('browser.webm'),
  ]);
  await ffmpeg(['-f', 'lavfi', '-i', 'sine=frequency=550:duration=2', '-c:a', 'libopus', '-b:a', '128k', path('chrome-audio.webm')]);
  await ffmpeg(['-f', 'lavfi', '-i', 'sine=frequency=660:duration=2', '-c:a', 'aac', '-b:a', '96k', path('memo.m4a')]);
  await ffmpeg(['-f', 'lavfi', '-i', 'sine=frequency=770:duration=2', '-c:a', 'libmp3lame', '-b:a', '96k', path('clip.mp3')]);
  const whole = readFileSync(path('phone.mp4'));
  writeFileSync(path('truncated.mp4'), whole.subarray(0, Math.floor(whole.length / 2)));
  writeFileSync(path('text.mp4'), 'this is not a video at all\n'.repeat(100));
  await ffmpeg(['-f', 'lavfi', '-i', 'sine=frequency=440:duration=12', '-c:a', 'libmp3lame', '-b:a', '192k', path('long.mp3')]);
  const jpeg = readFileSync(path('photo.jpg'));
  // Everything up to the start of the picture data (the SOS marker), then garbage instead of it.
  const scan = jpeg.indexOf(Buffer.from([0xff, 0xda]));
  writeFileSync(path('corrupt.jpg'), Buffer.concat([jpeg.subarray(0, scan + 2), Buffer.alloc(20_000, 7)]));
  return {
    jpegWithGps: path('photo.jpg'),
    phoneMp4: path('phone.mp4'),
    browserWebm: path('browser.webm'),
    chromeAudioWebm: path('chrome-audio.webm'),
    voiceMemoM4a: path('memo.m4a'),
    mp3: path('clip.mp3'),
    truncatedMp4: path('truncated.mp4'),
    textAsMp4: path('text.mp4'),
    longMp3: path('long.mp3'),
    corruptJpeg: path('corrupt.jpg'),
  };
}
