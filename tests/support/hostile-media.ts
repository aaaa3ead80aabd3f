import { execFile } from 'node:child_process';
import { createRequire } from 'node:module';
import { existsSync } from 'node:fs';
import { promisify } from 'node:util';
import { requirePrerequisite } from './required-suites.js';

const run = promisify(execFile);

/**
 * Media files an attacker crafts to make ffmpeg read something else than the upload: playlists
 * and scripts that name a file on the server's disk, hidden behind the signature of a container
 * the upload check accepts. Made in the test setup (nothing binary is committed), each a few
 * hundred bytes.
 */
export interface HostileMediaFile {
  name: string;
  /** The file name sent with the upload. */
  filename: string;
  bytes: Buffer;
}

/**
 * An ID3v2.4 tag with its footer flag set and no frames. file-type skips 10 bytes (the header
 * and the size it states), ffmpeg 20 (it adds the footer): whatever follows the first 10 bytes
 * is what file-type sees, whatever follows the first 20 is what ffmpeg's probe sees.
 */
const ID3_WITH_FOOTER = Buffer.from([0x49, 0x44, 0x33, 0x04, 0x00, 0x10, 0, 0, 0, 0]);
/** 10 bytes that file-type reads as FLV video (signature, version 1, audio and video flags, header size 9). */
const FLV_SIGNATURE = Buffer.from([0x46, 0x4c, 0x56, 0x01, 0x05, 0, 0, 0, 9, 0]);
/** 10 bytes that file-type reads as FLAC audio. */
const FLAC_SIGNATURE = Buffer.from('fLaC\0\0\0\x22\0\0', 'latin1');

/** An HLS media playlist whose one segment (or `repeat` copies of it) is a local file. */
export function hlsPlaylist(target: string, repeat = 1): string {
  const segment = `#EXTINF:10,\nfile:${target}\n`;
  return `#EXTM3U\n#EXT-X-VERSION:3\n#EXT-X-TARGETDURATION:10\n#EXT-X-MEDIA-SEQUENCE:0\n${segment.repeat(repeat)}#EXT-X-ENDLIST\n`;
}

/** A DASH manifest whose representation is a local file. */
export function dashManifest(target: string): string {
  return `<?xml version="1.0" encoding="utf-8"?>
<MPD xmlns="urn:mpeg:dash:schema:mpd:2011" profiles="urn:mpeg:dash:profile:isoff-on-demand:2011" type="static" mediaPresentationDuration="PT10S" minBufferTime="PT1S">
  <Period><AdaptationSet mimeType="video/mp4"><Representation id="1" bandwidth="100000"><BaseURL>file:${target}</BaseURL></Representation></AdaptationSet></Period>
</MPD>
`;
}

/** An ffconcat script naming a local file. */
export function ffconcatScript(target: string): string {
  return `ffconcat version 1.0\nfile 'file:${target}'\nfile '${target}'\n`;
}

/** Text that ffmpeg's probe reads as what it says, hidden behind a signature file-type believes. */
export function behindSignature(kind: 'flv' | 'flac', text: string): Buffer {
  return Buffer.concat([ID3_WITH_FOOTER, kind === 'flv' ? FLV_SIGNATURE : FLAC_SIGNATURE, Buffer.from(text)]);
}

/** Every file of the corpus that points at `target` (another file on the server's disk). */
export function hostileMediaCorpus(target: string): HostileMediaFile[] {
  return [
    { name: 'ID3 footer + FLV + HLS playlist', filename: 'clip.flv', bytes: behindSignature('flv', hlsPlaylist(target)) },
    { name: 'ID3 footer + fLaC + HLS playlist', filename: 'voice.flac', bytes: behindSignature('flac', hlsPlaylist(target)) },
    {
      name: 'ID3 footer + FLV + HLS playlist repeating one segment 5000 times',
      filename: 'clip.flv',
      bytes: behindSignature('flv', hlsPlaylist(target, 5000)),
    },
    { name: 'ID3 footer + FLV + ffconcat script', filename: 'clip.flv', bytes: behindSignature('flv', ffconcatScript(target)) },
    { name: 'ID3 footer + FLV + DASH manifest', filename: 'clip.flv', bytes: behindSignature('flv', dashManifest(target)) },
    { name: 'a plain HLS playlist', filename: 'stream.m3u8', bytes: Buffer.from(hlsPlaylist(target)) },
    {
      name: 'a plain HLS playlist repeating one segment 5000 times',
      filename: 'stream.m3u8',
      bytes: Buffer.from(hlsPlaylist(target, 5000)),
    },
    { name: 'a DASH manifest', filename: 'stream.mpd', bytes: Buffer.from(dashManifest(target)) },
    { name: 'an ffconcat script', filename: 'list.ffconcat', bytes: Buffer.from(ffconcatScript(target)) },
  ];
}

export interface FfmpegBuild {
  name: string;
  ffmpeg: string;
  ffprobe: string;
}

/**
 * The ffmpeg builds the portal may run: Debian's (the system's, 5.1) and the static builds that
 * `npm ci` installs (the fallback when the system has none). A build that is missing here is
 * reported with the reason instead of its path.
 */
export function ffmpegBuilds(): { build: FfmpegBuild | null; name: string; missing: string | null }[] {
  const require = createRequire(import.meta.url);
  const npm = (pkg: string) => {
    try {
      return (require(pkg) as { path: string }).path;
    } catch {
      return null;
    }
  };
  const system = { name: 'system ffmpeg', ffmpeg: '/usr/bin/ffmpeg', ffprobe: '/usr/bin/ffprobe' };
  const npmFfmpeg = npm('@ffmpeg-installer/ffmpeg');
  const npmFfprobe = npm('@ffprobe-installer/ffprobe');
  const builds = [
    existsSync(system.ffmpeg) && existsSync(system.ffprobe)
      ? { name: system.name, build: system, missing: null }
      : { name: system.name, build: null, missing: 'no /usr/bin/ffmpeg and /usr/bin/ffprobe (apt-get install ffmpeg)' },
    npmFfmpeg && npmFfprobe
      ? { name: 'npm static ffmpeg', build: { name: 'npm static ffmpeg', ffmpeg: npmFfmpeg, ffprobe: npmFfprobe }, missing: null }
      : { name: 'npm static ffmpeg', build: null, missing: 'the optional @ffmpeg-installer/@ffprobe-installer packages are not installed' },
  ];
  for (const { name, missing } of builds) if (missing) requirePrerequisite(`${name}: ${missing}`);
  return builds;
}

/** Points the portal's media code (locateFfmpeg) at one build for the tests that follow; answers a function that undoes it. */
export function useFfmpegBuild(build: FfmpegBuild): () => void {
  const before = { FFMPEG_PATH: process.env.FFMPEG_PATH, FFPROBE_PATH: process.env.FFPROBE_PATH };
  process.env.FFMPEG_PATH = build.ffmpeg;
  process.env.FFPROBE_PATH = build.ffprobe;
  return () => {
    for (const [name, value] of Object.entries(before)) {
      if (value === undefined) delete process.env[name];
      else process.env[name] = value;
    }
  };
}

/** The number of video frames ffprobe counts in a file (decoding it), or null when it cannot read it. */
export async function countVideoFrames(ffprobe: string, file: string): Promise<number | null> {
  try {
    const { stdout } = await run(
      ffprobe,
      ['-v', 'error', '-count_frames', '-select_streams', 'v:0', '-show_entries', 'stream=nb_read_frames', '-of', 'csv=p=0', file],
      {
        timeout: 60_000,
      },
    );
    const frames = Number(stdout.trim());
    return Number.isFinite(frames) ? frames : null;
  } catch {
    return null;
  }
}

/**
 * A small H.264 clip of a plain colour made by real ffmpeg (cheap to encode whatever its size):
 * `size` as "WxH", `rate` frames a second, `seconds` long. For the picture, frame-rate and
 * pixel-budget caps, which must be refused by what ffprobe reads, whatever the file's weight.
 */
export async function colourClip(
  ffmpeg: string,
  file: string,
  { size, rate, seconds }: { size: string; rate: number; seconds: number },
): Promise<string> {
  await run(
    ffmpeg,
    [
      '-v',
      'error',
      '-y',
      '-f',
      'lavfi',
      '-i',
      `color=c=gray:size=${size}:rate=${rate}:duration=${seconds}`,
      '-c:v',
      'libx264',
      '-preset',
      'ultrafast',
      '-pix_fmt',
      'yuv420p',
      file,
    ],
    {
      timeout: 60_000,
    },
  );
  return file;
}
