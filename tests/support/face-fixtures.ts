import { execFile } from 'node:child_process';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { promisify } from 'node:util';
import { locateFfmpeg } from '@portal/platform';

const run = promisify(execFile);
const require = createRequire(import.meta.url);

/**
 * Photos of people that ship inside the @vladmandic/face-api package (its demo folder), with the
 * number of faces in each, counted by eye: the portal's tests and bench/faces use them, so that
 * no picture of a face is fetched from anywhere or committed.
 */
export const FACE_SAMPLES = [
  { name: 'sample1.jpg', faces: 3 },
  { name: 'sample2.jpg', faces: 3 },
  { name: 'sample3.jpg', faces: 3 },
  { name: 'sample4.jpg', faces: 4 },
  { name: 'sample5.jpg', faces: 5 },
  { name: 'sample6.jpg', faces: 4 },
] as const;

/** The path of one of FACE_SAMPLES in the installed package. */
export function faceSample(name: (typeof FACE_SAMPLES)[number]['name']): string {
  return join(dirname(require.resolve('@vladmandic/face-api/package.json')), 'demo', name);
}

/** A group photo of three people (sample1.jpg: three faces, well lit, looking at the camera). */
export const GROUP_PHOTO = faceSample('sample1.jpg');

/**
 * A phone-like video made from a photo: 1280x720 H.264 + AAC, the camera panning down the picture
 * (the faces move up through the frame, so their boxes must follow them).
 */
export async function makeGroupVideo(photo: string, path: string, seconds = 3): Promise<string> {
  await run(
    locateFfmpeg().ffmpeg,
    [
      '-v',
      'error',
      '-y',
      '-loop',
      '1',
      '-framerate',
      '25',
      '-i',
      photo,
      '-f',
      'lavfi',
      '-i',
      `sine=frequency=440:duration=${seconds}`,
      '-vf',
      `scale=1280:-2,crop=1280:720:0:'min(100,t*${Math.round(100 / seconds)})',format=yuv420p`,
      '-t',
      String(seconds),
      '-c:v',
      'libx264',
      '-preset',
      'ultrafast',
      '-c:a',
      'aac',
      '-shortest',
      path,
    ],
    { timeout: 120_000 },
  );
  return path;
}
