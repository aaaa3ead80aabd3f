import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { buffer } from 'node:stream/consumers';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  TOPICS,
  enlargedFaceBox,
  faceBoxesAt,
  faceRegionsSchema,
  type FaceBox,
  type FaceRegions,
  type MediaBlurredData,
  type MediaJob,
  type MediaType,
} from '@portal/contracts';
import { FsBlobStore, SqliteEventBus, probeMedia, type ActiveJob } from '@portal/platform';
import { FACE_SAMPLES, GROUP_PHOTO, faceSample, makeGroupVideo } from '../../../tests/support/face-fixtures.js';
import { DEFAULT_FACE_MIN_CONFIDENCE } from '../src/config.js';
import { createFaceDetector, type FaceDetector } from '../src/faces/face-detector.js';
import { trackFaces, type FaceSample } from '../src/faces/face-tracks.js';
import type { FaceWork } from '../src/faces/face-work.js';
import { facesInPicture } from '../src/faces/picture-faces.js';
import { videoFaces } from '../src/faces/video-faces.js';
import { blurJobHandler, mediaJobHandler, mediaJobsHandler } from '../src/media-job-handler.js';

let root: string;
let blobs: FsBlobStore;
let bus: SqliteEventBus;
let detector: FaceDetector;
let faces: FaceWork;
const observed: { kind: string; found: number }[] = [];

beforeAll(() => {
  root = mkdtempSync(join(tmpdir(), 'media-faces-'));
  blobs = new FsBlobStore(join(root, 'blobs'));
  bus = new SqliteEventBus({ file: join(root, 'bus.sqlite'), logger: pino({ level: 'silent' }), pruneAfterMs: 3600_000 });
  detector = createFaceDetector({ minConfidence: DEFAULT_FACE_MIN_CONFIDENCE });
  faces = {
    settings: { mode: 'auto', minConfidence: DEFAULT_FACE_MIN_CONFIDENCE, samplesPerSecond: 4 },
    detector,
    observe: (kind, found) => void observed.push({ kind, found }),
  };
});
afterAll(async () => {
  await detector.close();
  await bus.close();
  rmSync(root, { recursive: true, force: true });
});

const deps = (work: FaceWork | undefined) => ({ blobs, bus, logger: pino({ level: 'silent' }), workRoot: join(root, 'work'), faces: work });
const handler = (work: FaceWork | undefined) => mediaJobHandler(deps(work));

let counter = 0;
async function runJob(file: string, media_type: MediaType, work: FaceWork | undefined = faces, extra: Partial<MediaJob> = {}) {
  counter++;
  const id = `face-item-${counter}`;
  await blobs.put(`evidence/${id}/r1/original`, readFileSync(file), { contentType: 'application/octet-stream' });
  const job: ActiveJob<MediaJob> = {
    id: `${id}.r1`,
    name: 'process-media',
    attemptsMade: 0,
    postponements: 0,
    data: {
      evidenceId: id,
      revision: 1,
      media_type,
      originalKey: `evidence/${id}/r1/original`,
      outputPrefix: `evidence/${id}/r1/`,
      ...extra,
    },
    updateProgress: async () => undefined,
  };
  return { id, result: await handler(work)(job) };
}

/** A job on the stored pictures of a photo processed by runJob (a blur, a face check). */
function storedPictureJob(id: string, jobId: string, data: Partial<MediaJob> & Pick<MediaJob, 'step'>): ActiveJob<MediaJob> {
  return {
    id: jobId,
    name: data.step!,
    attemptsMade: 0,
    postponements: 0,
    data: {
      evidenceId: id,
      revision: 1,
      media_type: 2,
      originalKey: `evidence/${id}/r1/original`,
      outputPrefix: `evidence/${id}/r1/`,
      ...data,
    },
    updateProgress: async () => undefined,
  };
}

const bytes = async (key: string) => buffer((await blobs.get(key))!.body);
const saved = async (key: string, name: string) => {
  const path = join(root, name);
  writeFileSync(path, await bytes(key));
  return path;
};
/** The faces the detector finds in a stored picture. */
const facesIn = async (key: string) => (await facesInPicture(detector, await bytes(key))).length;
/** The faces the detector finds in a stored video, sampled 4 times a second. */
async function facesInVideo(key: string, name: string) {
  const path = await saved(key, name);
  const probe = await probeMedia(path, { demuxer: 'mov' });
  const stream = probe.streams.find((s) => s.codec_type === 'video')!;
  return videoFaces(detector, path, { width: stream.width!, height: stream.height! }, 4, { niceness: 0, allowedMs: 120_000 });
}

describe('faces in photos', () => {
  it('finds every face of a group photo and pixelates them in the public copies so that the detector finds none there', async () => {
    const { result } = await runJob(GROUP_PHOTO, 2);
    expect(result).toMatchObject({ status: 'ready', faces: { check: 'done', count: 3 } });
    // The owner's copies are the picture as it is: the detector finds the three faces there.
    expect(await facesIn(result.display!.key)).toBe(3);
    // The public's: none, in the display copy and in the thumbnail.
    expect(result.public).toMatchObject({ poster: null, display: { contentType: 'image/webp' }, thumbnail: { contentType: 'image/webp' } });
    expect(await facesIn(result.public!.display.key)).toBe(0);
    expect(await facesIn(result.public!.thumbnail!.key)).toBe(0);
    expect(result.public!.placeholder).not.toBe(result.placeholder);
    // The regions are stored for the review dialog, in fractions of the picture.
    const doc = faceRegionsSchema.parse(JSON.parse((await bytes(result.faces!.key!)).toString('utf8')));
    expect(doc).toMatchObject({ width: result.width, height: result.height, duration: null, interval: null });
    expect(doc.regions.map((region) => region.source)).toEqual(['detected', 'detected', 'detected']);
    expect(observed.some((entry) => entry.kind === 'photo' && entry.found === 3)).toBe(true);
  }, 60_000);

  it('finds the faces of every sample photo the package ships (22 faces in 6 photos)', async () => {
    const counts = [];
    for (const sample of FACE_SAMPLES) counts.push((await facesInPicture(detector, faceSample(sample.name))).length);
    expect(counts).toEqual(FACE_SAMPLES.map((sample) => sample.faces));
  }, 60_000);

  it('finds no face in a picture without one, and makes no public copy then', async () => {
    const plain = join(root, 'plain.jpg');
    const { default: sharp } = await import('sharp');
    writeFileSync(
      plain,
      await sharp({ create: { width: 640, height: 480, channels: 3, background: { r: 120, g: 140, b: 90 } } })
        .jpeg()
        .toBuffer(),
    );
    const { result } = await runJob(plain, 2);
    expect(result).toMatchObject({ status: 'ready', faces: { check: 'done', count: 0, key: null }, public: null });
  }, 30_000);

  it('with FACE_BLUR=off says so and makes no public copy', async () => {
    const { result } = await runJob(GROUP_PHOTO, 2, { ...faces, settings: { ...faces.settings, mode: 'off' } });
    expect(result).toMatchObject({ status: 'ready', faces: { check: 'off', count: 0, key: null }, public: null });
  }, 30_000);

  it('makes the public copies again for regions an administrator changed: a region it removed (a poster on a wall) is shown again', async () => {
    const { id, result } = await runJob(GROUP_PHOTO, 2);
    const doc: FaceRegions = faceRegionsSchema.parse(JSON.parse((await bytes(result.faces!.key!)).toString('utf8')));
    // The first face is a poster on a wall, says the administrator: shown.
    doc.regions[0]!.removed = true;
    await blobs.put(`evidence/${id}/r1/faces-v1.json`, Buffer.from(JSON.stringify(doc)), { contentType: 'application/json' });
    const blurred = await blurJobHandler(deps(faces))(
      storedPictureJob(id, `${id}.r1.faces-v1`, { step: 'blur', faces: { key: `evidence/${id}/r1/faces-v1.json`, version: 1 } }),
    );
    expect(blurred).toMatchObject({ evidenceId: id, revision: 1, version: 1, error: null });
    expect(blurred.public!.display.key).toBe(`evidence/${id}/r1/blurred-v1-display.webp`);
    expect(await facesIn(blurred.public!.display.key)).toBe(1);
    const db = (await import('better-sqlite3')).default;
    const reader = new db(join(root, 'bus.sqlite'), { readonly: true });
    const rows = reader.prepare('SELECT topic, value FROM messages').all() as { topic: string; value: string }[];
    reader.close();
    const announced = rows.map((row) => ({ topic: row.topic, event: JSON.parse(row.value) as { type: string; data: unknown } }));
    expect(announced.filter(({ event }) => event.type === 'media.blurred').at(-1)).toEqual({
      topic: TOPICS.media,
      event: expect.objectContaining({ data: blurred }),
    });
  }, 60_000);
});

describe('faces in videos', () => {
  it('follows the faces of a panning group video and pixelates them in every frame of the public copy and its poster', async () => {
    const video = await makeGroupVideo(GROUP_PHOTO, join(root, 'group.mp4'), 2);
    const { result } = await runJob(video, 3);
    expect(result).toMatchObject({ status: 'ready', faces: { check: 'done' } });
    expect(result.faces!.count).toBeGreaterThanOrEqual(3);
    // The owner's 720p copy shows the faces, in every sample.
    const owner = await facesInVideo(result.display!.key, 'owner.mp4');
    expect(owner.samples).toBeGreaterThanOrEqual(8);
    expect(owner.regions.length).toBeGreaterThanOrEqual(3);
    // The public's: the detector finds no face in any of its samples; its poster has none either.
    const visitor = await facesInVideo(result.public!.display.key, 'public.mp4');
    expect(visitor.samples).toBe(owner.samples);
    expect(visitor.regions).toEqual([]);
    expect(await facesIn(result.poster!.key)).toBe(3);
    expect(await facesIn(result.public!.poster!.key)).toBe(0);
    expect(await facesIn(result.public!.thumbnail!.key)).toBe(0);
    // The same length and sound as the owner's copy.
    const probe = await probeMedia(await saved(result.public!.display.key, 'public-probe.mp4'), { demuxer: 'mov' });
    expect(probe.streams.map((stream) => stream.codec_type).sort()).toEqual(['audio', 'video']);
    expect(Math.abs(Number(probe.format.duration) - result.duration!)).toBeLessThan(0.2);
    const doc = faceRegionsSchema.parse(JSON.parse((await bytes(result.faces!.key!)).toString('utf8')));
    expect(doc).toMatchObject({ interval: 0.25, width: result.width, height: result.height });
  }, 180_000);
});

describe('items processed before faces were checked', () => {
  /** A check-faces job on an item's stored pictures, as the worker's queues hand it over, with the ffmpeg runs it started counted. */
  async function checkJob(id: string, data: Partial<MediaJob>, runs: string[]) {
    const job = storedPictureJob(id, `${id}.r1.faces-check`, { step: 'check-faces', ...data });
    return (await mediaJobsHandler({ ...deps(faces), ffmpegRun: (kind) => void runs.push(kind) })(job)) as MediaBlurredData;
  }

  it('checks a photo from its original as a new one is, and reports the check with its public copies', async () => {
    const { id, result } = await runJob(GROUP_PHOTO, 2, { ...faces, settings: { ...faces.settings, mode: 'off' } });
    expect(result.faces).toMatchObject({ check: 'off' });
    const before = observed.length;
    const runs: string[] = [];
    const checked = await checkJob(id, {}, runs);
    expect(checked).toMatchObject({ evidenceId: id, revision: 1, version: 0, error: null, faces: { check: 'done', count: 3 } });
    expect(await facesIn(checked.public!.display.key)).toBe(0);
    expect(await facesIn(checked.public!.thumbnail!.key)).toBe(0);
    expect(checked.public!.display.key).toBe(`evidence/${id}/r1/blurred-v0-display.webp`);
    // Its own copies are not made again; the check is counted as a new photo's is.
    expect(runs).toEqual([]);
    expect(observed.slice(before)).toEqual([{ kind: 'photo', found: 3 }]);
  }, 60_000);

  it('checks a video in its 720p copy with no transcode of its file, and says so when it has only its first copy', async () => {
    const video = await makeGroupVideo(GROUP_PHOTO, join(root, 'older.mp4'), 2);
    const { id, result } = await runJob(video, 3, { ...faces, settings: { ...faces.settings, mode: 'off' } });
    expect(result).toMatchObject({ status: 'ready', faces: { check: 'off' }, display: { key: `evidence/${id}/r1/display.mp4` } });
    const before = observed.length;
    const runs: string[] = [];
    const checked = await checkJob(id, { media_type: 3, displayKey: result.display!.key, posterKey: result.poster!.key }, runs);
    expect(checked).toMatchObject({ version: 0, error: null, faces: { check: 'done' } });
    expect(checked.faces!.count).toBeGreaterThanOrEqual(3);
    expect(runs).toEqual([]);
    expect(observed.slice(before)).toEqual([{ kind: 'video', found: checked.faces!.count }]);
    expect((await facesInVideo(checked.public!.display.key, 'older-public.mp4')).regions).toEqual([]);
    expect(await facesIn(checked.public!.poster!.key)).toBe(0);

    // A video that only ever had its first (remuxed) copy: nothing to look in without a transcode.
    const remuxedOnly = await checkJob(id, { media_type: 3, displayKey: `evidence/${id}/r1/display-remuxed.mp4` }, runs);
    expect(remuxedOnly).toMatchObject({ public: null, error: expect.stringMatching(/no converted copy/) });
    expect(remuxedOnly.faces).toBeUndefined();
  }, 180_000);
});

describe('boxes carried between samples', () => {
  /** A face walking right at `speed` (fractions of the width a second), sampled 4 times a second. */
  const walking = (speed: number, at: number): FaceBox => ({ x: 0.1 + speed * at, y: 0.3, w: 0.1, h: 0.15 });
  const samples: FaceSample[] = Array.from({ length: 9 }, (_, index) => ({
    t: index * 0.25,
    faces: [{ ...walking(0.2, index * 0.25), score: 0.9 }],
  }));

  const covers = (outer: FaceBox, inner: FaceBox) =>
    outer.x <= inner.x + 1e-9 &&
    outer.y <= inner.y + 1e-9 &&
    outer.x + outer.w >= inner.x + inner.w - 1e-9 &&
    outer.y + outer.h >= inner.y + inner.h - 1e-9;

  it('covers a walking face at every moment between two samples, and a sample it was missed in', () => {
    // Missed in the fourth sample (looking down).
    const regions = trackFaces(
      samples.map((sample, index) => (index === 3 ? { ...sample, faces: [] } : sample)),
      0.25,
    );
    expect(regions).toHaveLength(1);
    for (let t = 0; t <= 2; t += 0.02) {
      const boxes = faceBoxesAt(regions, t, 0.25);
      expect(
        boxes.some((box) => covers(box, walking(0.2, t))),
        `at ${t.toFixed(2)} s`,
      ).toBe(true);
    }
    // Before the first sample and after the last, for one interval; not beyond.
    expect(faceBoxesAt(regions, 2.2, 0.25)).toHaveLength(1);
    expect(faceBoxesAt(regions, 2.3, 0.25)).toHaveLength(0);
  });

  it('keeps two people apart, and ends a track when a face is gone for good', () => {
    const two: FaceSample[] = samples.map((sample) => ({
      t: sample.t,
      faces: [...sample.faces, ...(sample.t < 1 ? [{ x: 0.7, y: 0.2, w: 0.08, h: 0.12, score: 0.8 }] : [])],
    }));
    const regions = trackFaces(two, 0.25);
    expect(regions).toHaveLength(2);
    expect(regions[1]!.track.at(-1)!.t).toBe(0.75);
    expect(faceBoxesAt(regions, 1.5, 0.25)).toHaveLength(1);
  });

  it('enlarges a box over hair and chin, inside the picture', () => {
    expect(enlargedFaceBox({ x: 0.4, y: 0.4, w: 0.2, h: 0.2 })).toEqual({ x: 0.34, y: 0.30000000000000004, w: 0.32, h: 0.36 });
    const edge = enlargedFaceBox({ x: 0, y: 0, w: 0.1, h: 0.1 });
    expect(edge.x).toBe(0);
    expect(edge.y).toBe(0);
  });
});
