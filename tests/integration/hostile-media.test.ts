import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { waitFor } from '@portal/platform/testing';
import { ApiClient } from '../support/api-client.js';
import { newParticipant } from '../support/accounts.js';
import { uploadEvidence, waitForMedia, type EvidenceItem } from '../support/evidence.js';
import { makeMediaFixtures, type MediaFixtures } from '../support/media-fixtures.js';
import { colourClip, countVideoFrames, ffmpegBuilds, hostileMediaCorpus, useFfmpegBuild } from '../support/hostile-media.js';
import { NO_FACE_CHECK, startTestPortal, type TestPortal } from '../support/portal.js';

const run = promisify(execFile);
const ONBOARDING_VIDEO = fileURLToPath(new URL('../../web/public/onboarding/onboarding.mp4', import.meta.url));
const CORPUS = hostileMediaCorpus('/x').map((file) => file.name);

// Small caps, so that "too long", "too many tracks", "too large a picture", "too many frames a
// second" and "too much picture for its length" cost little to make. The fixtures (a 1280x720 clip
// of 3 s at 25 frames a second, a 1920x1080 one of 2 s at 15) are within all of them.
const CAPS = {
  MEDIA_MAX_VIDEO_SECONDS: '4',
  MEDIA_MAX_AUDIO_SECONDS: '6',
  MEDIA_MAX_STREAMS: '4',
  MEDIA_MAX_VIDEO_SIDE: '2048',
  MEDIA_MAX_VIDEO_PIXELS: '2100000',
  MEDIA_MAX_VIDEO_FPS: '60',
  MEDIA_MAX_VIDEO_PIXEL_BUDGET: '100000000',
};

/** What a participant may be shown: no server path, no ffmpeg output. */
export function expectParticipantSafe(message: string | null | undefined): void {
  expect(message ?? '').not.toMatch(/\/[\w.-]+\/|\\|ffmpeg|ffprobe|Invalid data|Error|at \w+ \(|original/i);
}

describe.each(ffmpegBuilds())('hostile media files, $name', ({ build, missing }) => {
  if (!build) {
    it.skip(`needs ${missing}`, () => undefined);
    return;
  }
  let restore: () => void;
  let portal: TestPortal;
  let fixtures: MediaFixtures;
  let dir: string;
  let attacker: ApiClient;
  /** Another participant's private video, and where its display copy lies on the server's disk. */
  let victim: { item: EvidenceItem; displayPath: string };
  const targets = () => ({ 'the onboarding video': ONBOARDING_VIDEO, "another participant's display copy": victim.displayPath });

  beforeAll(async () => {
    restore = useFfmpegBuild(build);
    dir = mkdtempSync(join(tmpdir(), 'hostile-media-'));
    [portal, fixtures] = await Promise.all([
      startTestPortal({ ...NO_FACE_CHECK, ...CAPS, FFMPEG_PATH: build.ffmpeg, FFPROBE_PATH: build.ffprobe }),
      makeMediaFixtures(join(dir, 'fixtures')),
    ]);
    const owner = (await newParticipant(portal.url, { username: 'victim', email: 'victim@example.org' })).client;
    attacker = (await newParticipant(portal.url, { username: 'attacker', email: 'attacker@example.org' })).client;
    const uploaded = await uploadEvidence(owner, fixtures.phoneMp4, { title: 'Private' });
    expect(uploaded.status).toBe(201);
    await waitForMedia(owner, uploaded.data.id as string);
    // Ready first with a remux of its streams; the 720p copy (display.mp4) replaces it.
    const item = await waitFor(
      async () => {
        const answer = await owner.get(`/api/evidence/item/${uploaded.data.id}`);
        return answer.data.media_status === 'ready' && /\?v=1$/.test(answer.data.aws_url ?? '') ? (answer.data as EvidenceItem) : null;
      },
      { timeoutMs: 120_000, what: 'the 720p copy of the private video' },
    );
    victim = { item, displayPath: join(portal.dataDir, 'blobs', 'data', 'evidence', item.id, 'r1', 'display.mp4') };
    // The file the corpus names must be readable there, or the test proves nothing.
    expect(await countVideoFrames(build.ffprobe, victim.displayPath)).toBeGreaterThan(10);
  }, 180_000);
  afterAll(async () => {
    await portal?.dispose();
    restore?.();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  async function send(bytes: Buffer, filename: string) {
    const file = join(dir, filename);
    writeFileSync(file, bytes);
    return uploadEvidence(attacker, file, { title: 'Hostile' });
  }

  /** Refused with a 4xx and a message, or taken in and ended `failed`: nothing made from it. */
  async function expectRefusedOrFailed(answer: { status: number; data: any }): Promise<void> {
    if (answer.status >= 400) {
      expect(answer.status, JSON.stringify(answer.data)).toBeLessThan(500);
      expect(answer.data.message).toEqual(expect.any(String));
      expectParticipantSafe(answer.data.message);
      return;
    }
    // Filed (201, or 200 for the last PATCH of a resumable upload): it must end failed.
    expect([200, 201]).toContain(answer.status);
    const item = await waitForMedia(attacker, answer.data.id as string, 120_000);
    // A display copy here would be made from the file the playlist names.
    expect({ status: item.media_status, display: item.aws_url }).toEqual({ status: 'failed', display: null });
    expect(item.media_error).toMatch(/could not be processed/);
    expectParticipantSafe(item.media_error);
  }

  it.each(CORPUS)(
    'refuses %s (or ends it failed), serving nothing of the file it names',
    async (name) => {
      for (const [label, target] of Object.entries(targets())) {
        const file = hostileMediaCorpus(target).find((candidate) => candidate.name === name)!;
        const started = Date.now();
        const answer = await send(file.bytes, file.filename);
        await expectRefusedOrFailed(answer).catch((error: Error) => {
          throw new Error(`${name} naming ${label}: ${error.message}`);
        });
        // Neither a playlist of 5000 segments nor anything else keeps the portal busy.
        expect(Date.now() - started).toBeLessThan(30_000);
      }
    },
    180_000,
  );

  /** A whole resumable (tus) upload: create it, then every byte in one PATCH; answers the last response. */
  async function sendResumable(bytes: Buffer, filename: string): Promise<{ status: number; data: any }> {
    const b64 = (value: string) => Buffer.from(value).toString('base64');
    const tus = { 'tus-resumable': '1.0.0' };
    const created = await attacker.request('POST', '/api/evidence/uploads', {
      headers: { ...tus, 'upload-length': String(bytes.length), 'upload-metadata': `title ${b64('Hostile')},filename ${b64(filename)}` },
    });
    expect(created.status).toBe(201);
    const response = await fetch(new URL(created.headers.get('location')!, portal.url), {
      method: 'PATCH',
      headers: {
        ...tus,
        'upload-offset': '0',
        'content-type': 'application/offset+octet-stream',
        cookie: [...attacker.cookies].map(([name, value]) => `${name}=${value}`).join('; '),
      },
      body: new Uint8Array(bytes),
    });
    const text = await response.text();
    return { status: response.status, data: text ? JSON.parse(text) : undefined };
  }

  it('refuses the same files (or ends them failed), and a video over the cap, through the resumable upload', async () => {
    for (const file of hostileMediaCorpus(ONBOARDING_VIDEO)) {
      await expectRefusedOrFailed(await sendResumable(file.bytes, file.filename)).catch((error: Error) => {
        throw new Error(`${file.name}: ${error.message}`);
      });
    }
    const video = join(dir, 'long-resumable.mp4');
    await run(build.ffmpeg, [
      '-v',
      'error',
      '-y',
      '-f',
      'lavfi',
      '-i',
      'testsrc=size=160x120:rate=10:duration=6',
      '-c:v',
      'libx264',
      '-preset',
      'ultrafast',
      '-pix_fmt',
      'yuv420p',
      video,
    ]);
    const answer = await sendResumable(readFileSync(video), 'long.mp4');
    expect(answer.status).toBe(413);
    expect(answer.data.message).toBe('Videos can be at most 4 seconds long');
  }, 60_000);

  it('refuses a video or a recording longer than the configured caps, with the limit in the message', async () => {
    const video = join(dir, 'long.mp4');
    await run(build.ffmpeg, [
      '-v',
      'error',
      '-y',
      '-f',
      'lavfi',
      '-i',
      'testsrc=size=160x120:rate=10:duration=6',
      '-c:v',
      'libx264',
      '-preset',
      'ultrafast',
      '-pix_fmt',
      'yuv420p',
      video,
    ]);
    const tooLongVideo = await uploadEvidence(attacker, video);
    expect(tooLongVideo.status).toBe(413);
    expect(tooLongVideo.data.message).toBe('Videos can be at most 4 seconds long');
    const tooLongAudio = await uploadEvidence(attacker, fixtures.longMp3);
    expect(tooLongAudio.status).toBe(413);
    expect(tooLongAudio.data.message).toBe('Recordings can be at most 6 seconds long');
  }, 60_000);

  it('ends failed a recording whose container does not say its length and runs past the cap', async () => {
    // A live WebM (written to a pipe, as browsers' recorders do) carries no duration: the upload
    // check cannot see its length, the worker stops at the cap.
    const { stdout } = await run(
      build.ffmpeg,
      ['-v', 'error', '-f', 'lavfi', '-i', 'sine=frequency=440:duration=10', '-c:a', 'libopus', '-f', 'webm', 'pipe:1'],
      {
        encoding: 'buffer',
        maxBuffer: 10 * 1024 * 1024,
      },
    );
    const answer = await send(stdout, 'live.webm');
    expect(answer.status, JSON.stringify(answer.data)).toBe(201);
    const item = await waitForMedia(attacker, answer.data.id as string, 120_000);
    expect(item).toMatchObject({
      media_status: 'failed',
      aws_url: null,
      media_error: 'The file could not be processed: recordings can be at most 6 seconds long',
    });
  }, 120_000);

  it('refuses a file with more tracks than the cap', async () => {
    const many = join(dir, 'many-tracks.mkv');
    const inputs = Array.from({ length: 6 }, (_, index) => ['-f', 'lavfi', '-i', `sine=frequency=${300 + index * 100}:duration=1`]).flat();
    const maps = Array.from({ length: 6 }, (_, index) => ['-map', `${index}:a`]).flat();
    await run(build.ffmpeg, ['-v', 'error', '-y', ...inputs, ...maps, '-c:a', 'libopus', many]);
    const answer = await uploadEvidence(attacker, many);
    expect(answer.status).toBe(415);
    expect(answer.data.message).toBe('This file has more tracks than the portal takes (at most 4)');
  }, 60_000);

  it('refuses a video whose picture is larger, or whose frame rate is higher, than the caps, whatever its file size', async () => {
    // A few kilobytes that would make the decoder hold pictures of any size, or decode thousands
    // of frames a second of video: refused at the upload, before any worker decodes a frame.
    const wide = join(dir, 'wide.mp4');
    await run(build.ffmpeg, [
      '-v',
      'error',
      '-y',
      '-f',
      'lavfi',
      '-i',
      'color=c=black:size=3072x64:rate=1:duration=1',
      '-c:v',
      'libx264',
      '-preset',
      'ultrafast',
      '-pix_fmt',
      'yuv420p',
      wide,
    ]);
    const tooWide = await uploadEvidence(attacker, wide);
    expect(tooWide.status, JSON.stringify(tooWide.data)).toBe(415);
    expect(tooWide.data.message).toBe("This video's picture is larger than the portal takes (at most 2048 pixels a side)");
    const fast = join(dir, 'fast.mp4');
    await run(build.ffmpeg, [
      '-v',
      'error',
      '-y',
      '-f',
      'lavfi',
      '-i',
      'color=c=black:size=64x64:rate=1000:duration=1',
      '-c:v',
      'libx264',
      '-preset',
      'ultrafast',
      '-pix_fmt',
      'yuv420p',
      fast,
    ]);
    const tooFast = await uploadEvidence(attacker, fast);
    expect(tooFast.status, JSON.stringify(tooFast.data)).toBe(415);
    expect(tooFast.data.message).toBe('This video has more frames a second than the portal takes (at most 60)');
  }, 60_000);

  it('refuses a video whose picture has more pixels than the cap, whatever its sides and its length', async () => {
    // Two frames of 2000x1600 (each side within the 2048 cap; 3.2 million pixels a frame).
    const square = await colourClip(build.ffmpeg, join(dir, 'many-pixels.mp4'), { size: '2000x1600', rate: 2, seconds: 1 });
    const answer = await uploadEvidence(attacker, square);
    expect(answer.status, JSON.stringify(answer.data)).toBe(415);
    expect(answer.data.message).toBe("This video's picture has more pixels than the portal takes (at most 2.1 million a frame)");
  }, 60_000);

  it('refuses a video whose picture size, frame rate and length together are over the pixel budget, and says how long it may be', async () => {
    // 1280x720 at 60 frames a second for 3 s: within the length, side, pixel and frame-rate caps,
    // 166 million pixels to decode against a budget of 100 million.
    const heavy = await colourClip(build.ffmpeg, join(dir, 'heavy.mp4'), { size: '1280x720', rate: 60, seconds: 3 });
    const answer = await uploadEvidence(attacker, heavy);
    expect(answer.status, JSON.stringify(answer.data)).toBe(415);
    expect(answer.data.message).toBe('At 1280×720 pixels and 60 frames a second, a video can be at most 1 second long: this one is longer');
    expect((await sendResumable(readFileSync(heavy), 'heavy.mp4')).status).toBe(415);
  }, 60_000);

  it('is still up afterwards and processes a good video and a good recording', async () => {
    for (const [file, type] of [
      [fixtures.browserWebm, 3],
      [fixtures.mp3, 4],
    ] as const) {
      const answer = await uploadEvidence(attacker, file);
      expect(answer.status).toBe(201);
      const item = await waitForMedia(attacker, answer.data.id as string, 120_000);
      expect(item).toMatchObject({ media_status: 'ready', media_type: type });
    }
  }, 180_000);
});

// A transcode that runs far past what the file's length predicts is stopped (the watchdog of the
// media worker's ffmpeg runner), and the item ends failed with a sentence of the portal's own.
// Here the factor is tiny, so that an honest clip of 3 s is "far too long" after a few milliseconds.
describe('the transcode watchdog', () => {
  const debian = ffmpegBuilds()[0]!;
  if (!debian.build) {
    it.skip(`needs ${debian.missing}`, () => undefined);
    return;
  }
  let portal: TestPortal;
  let dir: string;
  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'transcode-watchdog-'));
    // Every video transcoded before it is ready: with playable-first this H.264 clip would be ready
    // with a remux, and a 720p copy stopped by the watchdog leaves it that way (tested in the worker).
    portal = await startTestPortal({
      ...NO_FACE_CHECK,
      MEDIA_TRANSCODE_TIME_FACTOR: '0.001',
      MEDIA_TRANSCODE_SLACK_SECONDS: '0',
      MEDIA_TRANSCODE_POLICY: 'always',
    });
  }, 60_000);
  afterAll(async () => {
    await portal?.dispose();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('stops a transcode that runs far past what its length predicts, and ends the item failed with a clear media_error', async () => {
    const participant = (await newParticipant(portal.url)).client;
    const clip = await colourClip(debian.build!.ffmpeg, join(dir, 'clip.mp4'), { size: '640x360', rate: 25, seconds: 3 });
    const uploaded = await uploadEvidence(participant, clip);
    expect(uploaded.status).toBe(201);
    const item = await waitForMedia(participant, uploaded.data.id as string, 60_000);
    expect(item).toMatchObject({
      media_status: 'failed',
      aws_url: null,
      media_error: 'The file could not be processed: it took far longer to convert than a file of its length should',
    });
    expectParticipantSafe(item.media_error);
  }, 90_000);
});
