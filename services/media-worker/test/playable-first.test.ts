import { execFile } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { buffer } from 'node:stream/consumers';
import { promisify } from 'node:util';
import sharp from 'sharp';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { waitFor } from '@portal/platform/testing';
import { REMUXED_DISPLAY_NAME, mediaQueueList, openMediaQueues, type MediaJob, type MediaProcessedData } from '@portal/contracts';
import {
  FsBlobStore,
  SqliteEventBus,
  SqliteJobQueue,
  locateFfmpeg,
  probeMedia,
  type ActiveJob,
  type EventBus,
  type ProbeResult,
} from '@portal/platform';
import { mediaWorkerSettingsFromEnv } from '../src/config.js';
import { mediaJobHandler, transcodeJobIdFor } from '../src/media-job-handler.js';
import { createMediaWorker } from '../src/service.js';
import { playability } from '../src/processing/playable.js';
import { makeTestVideo } from '../../../tests/support/media-fixtures.js';

const run = promisify(execFile);
const LOCATION = '+48.8584+002.2945/';

let root: string;
let blobs: FsBlobStore;
let bus: SqliteEventBus;
let queue: SqliteJobQueue<MediaJob>;
let handle: ReturnType<typeof mediaJobHandler>;
/** A phone's portrait video: 1080p H.264 High + AAC-LC in MOV, frames stored landscape with a display rotation, the position in ©xyz. */
let phoneMov: string;
/** The same streams in MP4 with the position in the keys Android and Apple write (mdta, use_metadata_tags). */
let phoneMp4: string;
/** HEVC in MP4 (what iPhones record by default): not played by every browser. */
let hevcMp4: string;
/** Playable H.264 whose bitstream carries text in SEI user data. */
let seiMp4: string;
const SEI_UUID = 'dc45e9bd-e6d9-48b7-962c-d820d923eeef';
const SEI_TEXT = 'CAMERA-OWNER Jane Doe 51.5007N 0.1246W';

const ffmpeg = (args: string[]) => run(locateFfmpeg().ffmpeg, ['-v', 'error', '-y', ...args], { timeout: 120_000 });

beforeAll(async () => {
  root = mkdtempSync(join(tmpdir(), 'media-playable-'));
  const dir = join(root, 'fixtures');
  mkdirSync(dir);
  const upright = join(dir, 'upright.mp4');
  await ffmpeg([
    '-f',
    'lavfi',
    '-i',
    'testsrc2=size=1920x1080:rate=30:duration=3',
    '-f',
    'lavfi',
    '-i',
    'sine=frequency=440:duration=3:sample_rate=48000',
    '-c:v',
    'libx264',
    '-preset',
    'veryfast',
    '-profile:v',
    'high',
    '-pix_fmt',
    'yuv420p',
    '-c:a',
    'aac',
    '-ac',
    '2',
    '-shortest',
    upright,
  ]);
  // Rotation is set on a stream copy: ffmpeg 5.1 writes the `rotate` tag as the track's display matrix.
  phoneMov = join(dir, 'phone.mov');
  await ffmpeg(['-i', upright, '-c', 'copy', '-metadata', `location=${LOCATION}`, '-metadata:s:v:0', 'rotate=90', phoneMov]);
  phoneMp4 = join(dir, 'phone.mp4');
  await ffmpeg([
    '-i',
    upright,
    '-c',
    'copy',
    '-metadata',
    `location=${LOCATION}`,
    '-metadata',
    `com.apple.quicktime.location.ISO6709=${LOCATION}`,
    '-metadata:s:v:0',
    'rotate=90',
    '-movflags',
    'use_metadata_tags',
    phoneMp4,
  ]);
  hevcMp4 = await makeTestVideo(join(dir, 'hevc.mp4'), { size: '640x360', rate: 30, seconds: 2, codec: 'hevc' });
  // Text in the H.264 bitstream itself, as some cameras write it (owner, serial number, place):
  // SEI "user data unregistered" messages injected by h264_metadata, beside x264's own.
  seiMp4 = join(dir, 'sei.mp4');
  await ffmpeg(['-i', upright, '-c', 'copy', '-bsf:v', `h264_metadata=sei_user_data=${SEI_UUID}+${SEI_TEXT}`, seiMp4]);
  blobs = new FsBlobStore(join(root, 'blobs'));
  bus = new SqliteEventBus({ file: join(root, 'bus.sqlite'), logger: pino({ level: 'silent' }), pruneAfterMs: 3600_000 });
  queue = new SqliteJobQueue<MediaJob>({ file: join(root, 'jobs.sqlite'), queue: 'media-av', logger: pino({ level: 'silent' }) });
  handle = mediaJobHandler({
    blobs,
    bus,
    logger: pino({ level: 'silent' }),
    workRoot: join(root, 'work'),
    transcodePolicy: 'playable-first',
    transcodeQueue: queue,
  });
}, 180_000);
afterAll(async () => {
  await queue?.close();
  await bus?.close();
  rmSync(root, { recursive: true, force: true });
});

let counter = 0;
async function runJob(file: string, data: Partial<MediaJob> = {}): Promise<MediaProcessedData> {
  const id = data.evidenceId ?? `clip-${++counter}`;
  const originalKey = `evidence/${id}/r1/original`;
  if (!(await blobs.stat(originalKey))) await blobs.put(originalKey, readFileSync(file), { contentType: 'video/mp4' });
  return handle(videoJob(id, data));
}

/** The job of a video's first revision, as the evidence service queues it (its original already stored). */
function videoJob(id: string, data: Partial<MediaJob> = {}): ActiveJob<MediaJob> {
  return {
    id: data.step ? transcodeJobIdFor({ evidenceId: id, revision: 1 }) : `${id}.r1`,
    name: data.step ? 'transcode-video' : 'process-media',
    attemptsMade: 0,
    postponements: 0,
    data: {
      evidenceId: id,
      revision: 1,
      media_type: 3,
      originalKey: `evidence/${id}/r1/original`,
      outputPrefix: `evidence/${id}/r1/`,
      demuxer: 'mov',
      ...data,
    },
    updateProgress: async () => {},
  };
}

async function saved(key: string, name: string): Promise<{ path: string; bytes: Buffer; probe: ProbeResult }> {
  const bytes = await buffer((await blobs.get(key))!.body);
  const path = join(root, name);
  writeFileSync(path, bytes);
  return { path, bytes, probe: await probeMedia(path) };
}

/** No position anywhere: not in ffprobe's tags of the file or of any track, not in the bytes (as text, ©xyz, 3GPP loci or Apple's key). */
function expectNoLocation({ bytes, probe }: { bytes: Buffer; probe: ProbeResult }) {
  const tags = JSON.stringify([probe.format.tags ?? {}, ...probe.streams.map((stream) => stream.tags ?? {})]);
  expect(tags).not.toMatch(/location|48\.8584|ISO6709/i);
  for (const marker of ['48.8584', '+002.2945', '\u00a9xyz', 'loci', 'ISO6709', 'com.apple.quicktime']) {
    expect(bytes.includes(Buffer.from(marker, 'latin1')), marker).toBe(false);
  }
}

const rotation = (probe: ProbeResult) =>
  probe.streams.find((s) => s.codec_type === 'video')?.side_data_list?.find((d) => typeof d.rotation === 'number')?.rotation ?? 0;

describe('playable-first: a phone video is ready with a remux of its streams, then its 720p copy', () => {
  it('decides from the streams what every browser plays', async () => {
    for (const file of [phoneMov, phoneMp4]) {
      expect(playability(await probeMedia(file), 'mov')).toMatchObject({ playable: true });
    }
    expect(playability(await probeMedia(hevcMp4), 'mov')).toMatchObject({ playable: false, reason: 'video codec hevc' });
    const probe = await probeMedia(phoneMov);
    const video = probe.streams.find((s) => s.codec_type === 'video')!;
    const audio = probe.streams.find((s) => s.codec_type === 'audio')!;
    const changed = (streamChanges: object, target: 'video' | 'audio' = 'video') => ({
      ...probe,
      streams: probe.streams.map((s) => (s === (target === 'video' ? video : audio) ? { ...s, ...streamChanges } : s)),
    });
    expect(playability(changed({ level: 51 }), 'mov')).toMatchObject({ playable: false, reason: 'H.264 level 51' });
    expect(playability(changed({ profile: 'High 10', pix_fmt: 'yuv420p10le' }), 'mov')).toMatchObject({ playable: false });
    expect(playability(changed({ width: 3840, height: 2160 }), 'mov')).toMatchObject({ playable: false, reason: 'picture 3840x2160' });
    expect(playability(changed({ field_order: 'tt' }), 'mov')).toMatchObject({ playable: false });
    expect(playability(changed({ codec_tag_string: 'avc3' }), 'mov')).toMatchObject({ playable: false });
    expect(playability(changed({ profile: 'HE-AAC' }, 'audio'), 'mov')).toMatchObject({ playable: false });
    expect(playability(changed({ codec_name: 'opus', profile: undefined }, 'audio'), 'mov')).toMatchObject({ playable: false });
    expect(playability(changed({ channels: 6 }, 'audio'), 'mov')).toMatchObject({ playable: false });
    expect(playability({ ...probe, streams: probe.streams.filter((s) => s !== audio) }, 'mov')).toMatchObject({ playable: true });
    expect(playability(probe, 'matroska')).toMatchObject({ playable: false });
    expect(playability({ ...probe, format: { ...probe.format, duration: undefined } }, 'mov')).toMatchObject({ playable: false });
  });

  for (const [name, file] of [
    ['MOV with ©xyz', () => phoneMov],
    ['MP4 with the position in mdta keys', () => phoneMp4],
  ] as const) {
    it(`${name}: the first copy is the same streams, faststart, rotation kept, no position; the 720p copy replaces it`, async () => {
      const input = await probeMedia(file());
      expect(JSON.stringify(input.format.tags)).toContain('48.8584');
      expect(Math.abs(rotation(input))).toBe(90);

      const first = await runJob(file());
      expect(first).toMatchObject({ status: 'ready', display_copy: 'remuxed', width: 1080, height: 1920 });
      expect(first.display!.key).toMatch(new RegExp(`/r1/${REMUXED_DISPLAY_NAME}$`));
      // Poster first: the stills were made from the original, upright.
      const poster = await sharp(await buffer((await blobs.get(first.poster!.key))!.body)).metadata();
      expect(poster.height!).toBeGreaterThan(poster.width!);
      expect(first.thumbnail).not.toBeNull();

      const remuxed = await saved(first.display!.key, `${counter}-remuxed.mp4`);
      const video = remuxed.probe.streams.find((s) => s.codec_type === 'video')!;
      expect(video).toMatchObject({ codec_name: 'h264', profile: 'High', width: 1920, height: 1080 });
      expect(remuxed.probe.streams.find((s) => s.codec_type === 'audio')).toMatchObject({ codec_name: 'aac' });
      expect(rotation(remuxed.probe)).toBe(rotation(input));
      expect(remuxed.bytes.indexOf('moov')).toBeLessThan(remuxed.bytes.indexOf('mdat'));
      expectNoLocation(remuxed);
      expect(first.duration).toBeGreaterThan(2.5);

      // The 720p job is queued (once, whatever happens to the first job), with the first job's stills.
      const evidenceId = first.evidenceId;
      const queued = await queue.getJob(transcodeJobIdFor({ evidenceId, revision: 1 }));
      expect(queued).toMatchObject({
        name: 'transcode-video',
        state: 'waiting',
        data: { step: 'transcode', stills: { placeholder: first.placeholder } },
      });
      expect(await runJob(file(), { evidenceId })).toMatchObject({ display_copy: 'remuxed' });
      expect(await queue.getJob(transcodeJobIdFor({ evidenceId, revision: 1 }))).toMatchObject({ state: 'waiting', data: queued!.data });

      const final = await runJob(file(), queued!.data);
      expect(final).toMatchObject({
        status: 'ready',
        display_copy: 'transcoded',
        width: 720,
        height: 1280,
        thumbnail: first.thumbnail,
        poster: first.poster,
      });
      expect(final.display!.key).toBe(`evidence/${evidenceId}/r1/display.mp4`);
      const transcoded = await saved(final.display!.key, `${counter}-720p.mp4`);
      expect(rotation(transcoded.probe)).toBe(0);
      expectNoLocation(transcoded);
    }, 120_000);
  }

  it('drops the text a camera wrote into the H.264 SEI user data from the remuxed copy, which still plays', async () => {
    // The text is there before: the injected user data and x264's own (its settings).
    const before = readFileSync(seiMp4);
    expect(before.includes(SEI_TEXT)).toBe(true);
    expect(before.includes('x264 - core')).toBe(true);
    const first = await runJob(seiMp4);
    expect(first).toMatchObject({ status: 'ready', display_copy: 'remuxed' });
    const remuxed = await saved(first.display!.key, `${counter}-sei-remuxed.mp4`);
    expect(remuxed.bytes.includes(SEI_TEXT)).toBe(false);
    expect(remuxed.bytes.includes('x264 - core')).toBe(false);
    expect(remuxed.bytes.includes(Buffer.from(SEI_UUID.replace(/-/g, ''), 'hex'))).toBe(false);
    // Every frame still decodes, with no error.
    const decoded = await run(locateFfmpeg().ffmpeg, ['-v', 'error', '-i', remuxed.path, '-f', 'null', '-'], { timeout: 60_000 });
    expect(decoded.stderr).toBe('');
    expect(remuxed.probe.streams.find((s) => s.codec_type === 'video')).toMatchObject({ codec_name: 'h264', nb_frames: '90' });
  }, 60_000);

  it('transcodes what not every browser plays before it is ready, as the always policy does', async () => {
    const result = await runJob(hevcMp4);
    expect(result).toMatchObject({ status: 'ready', width: 640, height: 360 });
    expect(result.display_copy).toBeUndefined();
    expect(result.display!.key).toMatch(/\/display\.mp4$/);
    expect((await saved(result.display!.key, 'hevc-out.mp4')).probe.streams.find((s) => s.codec_type === 'video')?.codec_name).toBe('h264');
    expect(await queue.getJob(transcodeJobIdFor({ evidenceId: result.evidenceId, revision: 1 }))).toBeNull();
  }, 60_000);

  it('a video transcoded before it is ready has its poster and thumbnail stored and announced before the transcode', async () => {
    // The real bus, watched as the handler publishes: what exists in the blob store at that moment.
    const seen: { type: string; data: Record<string, unknown>; display: boolean; poster: boolean; thumbnail: boolean }[] = [];
    const id = `clip-${++counter}`;
    const watchedBus: EventBus = {
      subscribe: (options) => bus.subscribe(options),
      ping: () => bus.ping(),
      lag: (groupId, topics) => bus.lag(groupId, topics),
      consumerStates: () => bus.consumerStates(),
      close: async () => {},
      publish: async (topic, messages) => {
        for (const message of messages) {
          const data = message.value.data as { poster?: { key: string } | null; thumbnail?: { key: string } | null };
          seen.push({
            type: message.value.type,
            data: message.value.data as Record<string, unknown>,
            display: (await blobs.stat(`evidence/${id}/r1/display.mp4`)) !== null,
            poster: data.poster ? (await blobs.stat(data.poster.key)) !== null : false,
            thumbnail: data.thumbnail ? (await blobs.stat(data.thumbnail.key)) !== null : false,
          });
        }
        return bus.publish(topic, messages);
      },
    };
    for (const policy of ['playable-first', 'always'] as const) {
      seen.length = 0;
      await blobs.deletePrefix(`evidence/${id}/`);
      await blobs.put(`evidence/${id}/r1/original`, readFileSync(hevcMp4), { contentType: 'video/mp4' });
      const handler = mediaJobHandler({
        blobs,
        bus: watchedBus,
        logger: pino({ level: 'silent' }),
        workRoot: join(root, `work-stills-${policy}`),
        transcodePolicy: policy,
        transcodeQueue: queue,
      });
      const result = await handler(videoJob(id));
      expect(result, policy).toMatchObject({ status: 'ready', width: 640, height: 360 });
      expect(
        seen.map((event) => event.type),
        policy,
      ).toEqual(['media.stills', 'media.ready']);
      // When the stills were announced: poster and thumbnail stored, no display copy yet.
      expect(seen[0], policy).toMatchObject({ display: false, poster: true, thumbnail: true });
      expect(seen[0]!.data, policy).toMatchObject({
        evidenceId: id,
        revision: 1,
        poster: result.poster,
        thumbnail: result.thumbnail,
        placeholder: result.placeholder,
      });
      const poster = await sharp(await buffer((await blobs.get(result.poster!.key))!.body)).metadata();
      expect(poster, policy).toMatchObject({ format: 'webp', width: 640, height: 360 });
    }
  }, 90_000);

  it('with the always policy, a playable video is transcoded before it is ready', async () => {
    const always = mediaJobHandler({
      blobs,
      bus,
      logger: pino({ level: 'silent' }),
      workRoot: join(root, 'work-always'),
      transcodePolicy: 'always',
    });
    const id = `clip-${++counter}`;
    await blobs.put(`evidence/${id}/r1/original`, readFileSync(phoneMov), { contentType: 'video/quicktime' });
    const result = await always(videoJob(id));
    expect(result).toMatchObject({ status: 'ready', width: 720, height: 1280 });
    expect(result.display_copy).toBeUndefined();
    expectNoLocation(await saved(result.display!.key, 'always.mp4'));
    expect(await queue.getJob(transcodeJobIdFor({ evidenceId: id, revision: 1 }))).toBeNull();
  }, 60_000);

  it("a fresh phone video is ready with its first copy while an earlier video's 720p copy is still being made", async () => {
    // The media worker as the portal runs it (default settings: one audio/video job at a time),
    // on its own real queues and bus; two phone videos of 12 s, whose 720p copies take seconds.
    const dir = join(root, 'lanes');
    mkdirSync(dir);
    const clip = await makeTestVideo(join(dir, 'phone-12s.mp4'), { size: '1920x1080', rate: 30, seconds: 12 });
    const logger = pino({ level: 'silent' });
    const queues = openMediaQueues(
      (name) => new SqliteJobQueue<MediaJob>({ file: join(dir, 'jobs.sqlite'), queue: name, logger, pollIntervalMs: 50 }),
    );
    const laneBus = new SqliteEventBus({ file: join(dir, 'bus.sqlite'), logger, pruneAfterMs: 3600_000 });
    const reported: { evidenceId: string; type: string; display_copy?: string }[] = [];
    const watching = await laneBus.subscribe({
      groupId: 'lanes',
      topics: ['media.results'],
      handler: async (message) => {
        const data = message.value.data as { evidenceId: string; display_copy?: string };
        reported.push({ evidenceId: data.evidenceId, type: message.value.type, display_copy: data.display_copy });
      },
    });
    const worker = createMediaWorker(mediaWorkerSettingsFromEnv({ DATA_DIR: dir }), { bus: laneBus, mediaQueues: queues, blobs, logger });
    const firstJob = async (id: string) => {
      await blobs.put(`evidence/${id}/r1/original`, readFileSync(clip), { contentType: 'video/mp4' });
      const data: MediaJob = {
        evidenceId: id,
        revision: 1,
        media_type: 3,
        originalKey: `evidence/${id}/r1/original`,
        outputPrefix: `evidence/${id}/r1/`,
        demuxer: 'mov',
      };
      await queues.av.add('process-media', data, { jobId: `${id}.r1` });
    };
    // Wherever the 720p job was queued.
    const transcodeJob = async (id: string) => {
      const jobId = transcodeJobIdFor({ evidenceId: id, revision: 1 });
      return (await queues.transcode.getJob(jobId)) ?? (await queues.av.getJob(jobId));
    };
    const readyWith = (id: string, copy: string) =>
      reported.some((r) => r.evidenceId === id && r.type === 'media.ready' && r.display_copy === copy);
    try {
      await worker.start();
      await firstJob('lane-a');
      await waitFor(async () => (await transcodeJob('lane-a'))?.state === 'active', {
        timeoutMs: 60_000,
        what: "the first video's 720p copy to start",
      });
      await firstJob('lane-b');
      await waitFor(() => readyWith('lane-b', 'remuxed'), { timeoutMs: 60_000, intervalMs: 50, what: "the second video's first copy" });
      // The second video is ready while the first one's 720p copy is still being made.
      expect(readyWith('lane-a', 'transcoded')).toBe(false);
      expect((await transcodeJob('lane-a'))?.state).toBe('active');
      expect(await queues.transcode.getJob(transcodeJobIdFor({ evidenceId: 'lane-a', revision: 1 }))).not.toBeNull();
    } finally {
      // The 720p copies are not waited for: handed back to their queue.
      await worker.stop({ handBackAfterMs: 0 });
      await watching.close();
      for (const queue of mediaQueueList(queues)) await queue.close();
      await laneBus.close();
    }
  }, 240_000);

  it('a 720p job whose original is gone (the item was deleted) reports nothing and leaves the first copy', async () => {
    const published: string[] = [];
    const before = await bus.subscribe({
      groupId: `probe-${Date.now()}`,
      topics: ['media.results'],
      fromBeginning: false,
      handler: async (m) => void published.push(m.value.type),
    });
    const result = await runJob(phoneMov, { evidenceId: 'gone-item', originalKey: 'evidence/gone-item/r1/missing', step: 'transcode' });
    expect(result.status).toBe('failed');
    await new Promise((resolve) => setTimeout(resolve, 300));
    await before.close();
    expect(published).toEqual([]);
  }, 30_000);

  it('a 720p job stopped by the transcode watchdog reports nothing: the item keeps its first copy', async () => {
    const slow = mediaJobHandler({
      blobs,
      bus,
      logger: pino({ level: 'silent' }),
      workRoot: join(root, 'work-slow'),
      transcodePolicy: 'playable-first',
      transcodeQueue: queue,
      watchdog: { factor: 0.001, slackSeconds: 0 },
    });
    const id = `clip-${++counter}`;
    await blobs.put(`evidence/${id}/r1/original`, readFileSync(phoneMov), { contentType: 'video/quicktime' });
    const published: string[] = [];
    const watching = await bus.subscribe({
      groupId: `slow-${Date.now()}`,
      topics: ['media.results'],
      fromBeginning: false,
      handler: async (m) => void published.push(m.value.type),
    });
    const result = await slow(videoJob(id, { step: 'transcode' }));
    expect(result).toMatchObject({ status: 'failed', display: null, error: expect.stringMatching(/far longer/) });
    await new Promise((resolve) => setTimeout(resolve, 300));
    await watching.close();
    expect(published).toEqual([]);
    expect(await blobs.stat(`evidence/${id}/r1/display.mp4`)).toBeNull();
  }, 60_000);
});
