// The all-in-one portal as a child process of a bench, its participants (registered and signed
// in through the API, as a phone does) and the media they send (made with sharp and ffmpeg).
import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { closeSync, mkdirSync, openSync, writeSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { promisify } from 'node:util';
import { freePort, login, waitFor } from './http.mjs';
import { HOST, ROOT, orFail, startChild } from './runner.mjs';

export const ADMIN = { username: 'benchadmin', email: 'benchadmin@example.org', password: 'bench-admin-pass-1' };

/** What a bench needs built to start the all-in-one portal. */
export const ALL_IN_ONE_BUILT = ['packages/contracts/dist/index.js', 'packages/platform/dist/index.js', 'packages/all-in-one/dist/main.js'];

/**
 * Starts the all-in-one portal (packages/all-in-one/dist/main.js) with its data in a folder of
 * the bench's temporary folder. The evidence service listens on a known loopback port, so that
 * the bench can read its Prometheus metrics (the media queue's depth) at /metrics.
 */
export async function startAllInOne(tempDir, env = {}, { name = 'portal', profileDir, nodeArgs } = {}) {
  const dataDir = join(tempDir, `${name}-data`);
  mkdirSync(dataDir, { recursive: true });
  const [port, evidencePort] = [await freePort(), await freePort()];
  const entry = startChild(
    name,
    'packages/all-in-one/dist/main.js',
    {
      DATA_DIR: dataDir,
      HOST,
      PORT: String(port),
      IDENTITY_PORT: '0',
      EVIDENCE_PORT: String(evidencePort),
      WEB_DIST: join(tempDir, 'no-web'), // the benches need the API only
      INTERNAL_SECRET: randomBytes(32).toString('base64url'),
      ADMIN_USERNAME: ADMIN.username,
      ADMIN_EMAIL: ADMIN.email,
      ADMIN_PASSWORD: ADMIN.password,
      ...env,
    },
    { profileDir, nodeArgs },
  );
  const url = `http://${HOST}:${port}`;
  await orFail(waitFor(`${url}/readyz`, 'all-in-one portal', 60_000));
  return { entry, url, dataDir, evidenceUrl: `http://${HOST}:${evidencePort}` };
}

/** Registers a participant (multipart, with the face photo) and signs them in; answers their session cookie. */
export async function registerParticipant(url, username, facePhoto) {
  const password = 'bench-participant-1';
  const form = new FormData();
  const fields = {
    username,
    password,
    email: `${username}@example.org`,
    usernameOrEmail: `${username}@example.org`,
    phone_number: '5551234567',
    full_name: `Bench ${username}`,
    pronouns: 'They/Them',
    role: '1',
  };
  for (const [key, value] of Object.entries(fields)) form.append(key, value);
  form.append('verification_photo', new Blob([facePhoto], { type: 'image/jpeg' }), 'face.jpg');
  const response = await fetch(`${url}/api/user/register`, { method: 'POST', body: form, signal: AbortSignal.timeout(60_000) });
  const text = await response.text();
  if (response.status !== 201) throw new Error(`registering ${username} answered ${response.status}: ${text}`);
  const cookie = await login(url, { username, password });
  // Evidence waits for the onboarding video.
  const { id } = JSON.parse(text);
  const watched = await fetch(`${url}/api/user/watched/${id}`, { method: 'PUT', headers: { cookie }, signal: AbortSignal.timeout(30_000) });
  if (watched.status !== 200)
    throw new Error(`marking the video watched for ${username} answered ${watched.status}: ${await watched.text()}`);
  return { username, cookie, id };
}

/** The worker's own processing functions and the ffmpeg it uses (from the build). */
export async function mediaTools() {
  const platform = await import(pathToFileURL(join(ROOT, 'packages/platform/dist/index.js')).href);
  return { platform, ffmpeg: platform.locateFfmpeg().ffmpeg };
}

const run = promisify(execFile);

/** A JPEG like a phone's camera makes (noise compresses like a real photo does: badly). */
export async function noisyJpeg(width, height, quality = 85) {
  const sharp = (await import('sharp')).default;
  return sharp({ create: { width, height, channels: 3, noise: { type: 'gaussian', mean: 128, sigma: 40 } } })
    .jpeg({ quality })
    .toBuffer();
}

/** A recording like the browser's recorder makes: WebM/Opus at 128 kbit/s. */
export async function opusRecording(ffmpeg, file, seconds) {
  await run(ffmpeg, [
    '-v',
    'error',
    '-y',
    '-f',
    'lavfi',
    '-i',
    `sine=frequency=300:duration=${seconds}`,
    '-c:a',
    'libopus',
    '-b:a',
    '128k',
    file,
  ]);
  return file;
}

/** A short phone-like MP4 (H.264 + AAC) with its index in front (+faststart). */
export async function smallMp4(ffmpeg, file, { seconds = 2, size = '640x360' } = {}) {
  await run(ffmpeg, [
    '-v',
    'error',
    '-y',
    '-f',
    'lavfi',
    '-i',
    `testsrc2=size=${size}:rate=30:duration=${seconds}`,
    '-f',
    'lavfi',
    '-i',
    `sine=frequency=300:duration=${seconds}`,
    '-c:v',
    'libx264',
    '-preset',
    'veryfast',
    '-pix_fmt',
    'yuv420p',
    '-c:a',
    'aac',
    '-shortest',
    '-movflags',
    '+faststart',
    file,
  ]);
  return file;
}

/**
 * A valid MP4 of exactly `size` bytes: a short H.264/AAC clip (index in front) followed by one
 * top-level "free" box that fills the rest. MP4 readers skip free boxes, so the evidence service's
 * type check (file-type, then ffprobe for the tracks) sees a playable video. The filler is random
 * bytes (a 1 MiB block repeated), like compressed video: nothing on the way can squeeze it.
 */
export async function paddedMp4(ffmpeg, dir, name, size) {
  const clip = await readFile(await smallMp4(ffmpeg, join(dir, `${name}-clip.mp4`)));
  const fill = size - clip.length;
  if (fill < 8) throw new Error(`--size is smaller than the clip itself (${clip.length} bytes)`);
  const path = join(dir, `${name}.mp4`);
  const fd = openSync(path, 'w');
  try {
    writeSync(fd, clip);
    const header = Buffer.alloc(8);
    header.writeUInt32BE(fill, 0);
    header.write('free', 4, 'latin1');
    writeSync(fd, header);
    const block = randomBytes(2 ** 20);
    let left = fill - 8;
    while (left > 0) {
      const n = Math.min(left, block.length);
      writeSync(fd, block, 0, n);
      left -= n;
    }
  } finally {
    closeSync(fd);
  }
  return path;
}
