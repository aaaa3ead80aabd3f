import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { buffer } from 'node:stream/consumers';
import { promisify } from 'node:util';
import sharp from 'sharp';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TOPICS, type MediaJob, type MediaProcessedData, type MediaType } from '@portal/contracts';
import { FsBlobStore, SqliteEventBus, locateFfmpeg, probeMedia, type ActiveJob } from '@portal/platform';
import { makeMediaFixtures, type MediaFixtures } from '../../../tests/support/media-fixtures.js';
import { mediaJobHandler } from '../src/media-job-handler.js';

let root: string;
let fixtures: MediaFixtures;
let blobs: FsBlobStore;
let bus: SqliteEventBus;
let handle: ReturnType<typeof mediaJobHandler>;

beforeAll(async () => {
  root = mkdtempSync(join(tmpdir(), 'media-worker-'));
  fixtures = await makeMediaFixtures(join(root, 'fixtures'));
  blobs = new FsBlobStore(join(root, 'blobs'));
  // Kept: this test reads what was announced after every job ran (nothing consumes the topic here).
  bus = new SqliteEventBus({ file: join(root, 'bus.sqlite'), logger: pino({ level: 'silent' }), pruneAfterMs: 3600_000 });
  handle = mediaJobHandler({ blobs, bus, logger: pino({ level: 'silent' }), workRoot: join(root, 'work') });
}, 120_000);
afterAll(async () => {
  await bus.close();
  rmSync(root, { recursive: true, force: true });
});

let counter = 0;
/** Stores a fixture as an original and runs one job on it, as the queue would. */
async function runJob(file: string, media_type: MediaType, demuxer?: string): Promise<{ result: MediaProcessedData; progress: number[] }> {
  counter++;
  const id = `item-${counter}`;
  await blobs.put(`evidence/${id}/r1/original`, readFileSync(file), { contentType: 'application/octet-stream' });
  const progress: number[] = [];
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
      ...(demuxer ? { demuxer } : {}),
    },
    updateProgress: async (value) => void progress.push(value),
  };
  return { result: await handle(job), progress };
}

async function saveBlob(key: string, name: string): Promise<string> {
  const object = await blobs.get(key);
  const path = join(root, name);
  writeFileSync(path, await buffer(object!.body));
  return path;
}

describe('media worker', () => {
  it('turns a phone JPEG into upright WebP display and thumbnail copies without any metadata, plus a placeholder', async () => {
    expect((await sharp(fixtures.jpegWithGps).metadata()).exif).toBeDefined();
    const { result } = await runJob(fixtures.jpegWithGps, 2);
    expect(result).toMatchObject({ status: 'ready', media_type: 2, width: 600, height: 800, duration: null, poster: null });
    for (const derivative of [result.display!, result.thumbnail!]) {
      expect(derivative.contentType).toBe('image/webp');
      const bytes = await buffer((await blobs.get(derivative.key))!.body);
      const metadata = await sharp(bytes).metadata();
      expect(metadata.format).toBe('webp');
      expect(metadata.exif).toBeUndefined();
      expect(metadata.xmp).toBeUndefined();
      expect(metadata.height!).toBeGreaterThan(metadata.width!);
      expect(bytes.includes(Buffer.from('TestPhone'))).toBe(false);
    }
    expect(Buffer.from(result.placeholder!, 'base64').length).toBeGreaterThan(10);
  });

  it('turns a rotated phone video into upright H.264/AAC MP4, at most 720p, faststart, no location, with a poster', async () => {
    const input = await probeMedia(fixtures.phoneMp4);
    expect(JSON.stringify(input.format.tags)).toContain('40.7128');
    expect(JSON.stringify(input.streams)).toMatch(/"rotation":-?90/);
    const { result, progress } = await runJob(fixtures.phoneMp4, 3);
    expect(result.status).toBe('ready');
    expect(result.display!.contentType).toBe('video/mp4');
    const output = await saveBlob(result.display!.key, 'out.mp4');
    const probe = await probeMedia(output);
    const video = probe.streams.find((stream) => stream.codec_type === 'video')!;
    const audio = probe.streams.find((stream) => stream.codec_type === 'audio')!;
    expect(video.codec_name).toBe('h264');
    expect(audio.codec_name).toBe('aac');
    expect([video.width, video.height]).toEqual([720, 1280]);
    expect(video.side_data_list?.some((side) => side.rotation)).toBeFalsy();
    expect(JSON.stringify(probe.format.tags ?? {})).not.toContain('40.7128');
    const bytes = readFileSync(output);
    expect(bytes.includes(Buffer.from('40.7128'))).toBe(false);
    expect(bytes.indexOf('moov')).toBeLessThan(bytes.indexOf('mdat'));
    expect(result.duration).toBeGreaterThan(2.5);
    expect(result.duration).toBeLessThan(3.5);
    expect(result.poster!.contentType).toBe('image/webp');
    expect((await sharp(await buffer((await blobs.get(result.poster!.key))!.body)).metadata()).width).toBe(720);
    expect(result.thumbnail).not.toBeNull();
    expect(progress.length).toBeGreaterThan(0);
  });

  it('runs ffmpeg at the niceness it is given (MEDIA_AV_NICE), below the worker, and the worker itself at its own', async () => {
    const nice = mediaJobHandler({ blobs, bus, logger: pino({ level: 'silent' }), workRoot: join(root, 'work-nice'), ffmpegNiceness: 7 });
    /** The niceness of each ffmpeg this process started, from /proc (Linux). */
    const seen = new Set<number>();
    const ownNice = Number(readFileSync('/proc/self/stat', 'utf8').split(') ')[1]!.split(' ')[16]);
    const look = () => {
      for (const pid of readdirSync('/proc').filter((name) => /^\d+$/.test(name))) {
        try {
          const [comm, rest] = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ');
          const fields = rest!.split(' ');
          // After "pid (comm) ": state, ppid, … nice is the 17th of those.
          if (comm!.endsWith('(ffmpeg') && Number(fields[1]) === process.pid) seen.add(Number(fields[16]));
        } catch {
          // gone meanwhile
        }
      }
    };
    const watcher = setInterval(look, 5);
    try {
      counter++;
      const id = `item-${counter}`;
      await blobs.put(`evidence/${id}/r1/original`, readFileSync(fixtures.browserWebm), { contentType: 'application/octet-stream' });
      const result = await nice({
        id: `${id}.r1`,
        name: 'process-media',
        attemptsMade: 0,
        postponements: 0,
        data: { evidenceId: id, revision: 1, media_type: 3, originalKey: `evidence/${id}/r1/original`, outputPrefix: `evidence/${id}/r1/` },
        updateProgress: async () => undefined,
      });
      expect(result.status).toBe('ready');
    } finally {
      clearInterval(watcher);
    }
    expect(seen.has(ownNice + 7), `ffmpeg niceness seen: ${[...seen].join(', ')}`).toBe(true);
    expect(Number(readFileSync('/proc/self/stat', 'utf8').split(') ')[1]!.split(' ')[16])).toBe(ownNice);
  });

  it('scales a 1080p browser WebM down to 720p H.264', async () => {
    const { result } = await runJob(fixtures.browserWebm, 3);
    const probe = await probeMedia(await saveBlob(result.display!.key, 'webm-out.mp4'));
    const video = probe.streams.find((stream) => stream.codec_type === 'video')!;
    expect([video.codec_name, video.width, video.height]).toEqual(['h264', 1280, 720]);
  });

  it.each([
    ['Chrome WebM/Opus', 'chromeAudioWebm'],
    ['an M4A voice memo', 'voiceMemoM4a'],
    ['an MP3', 'mp3'],
  ] as const)('turns %s into AAC in M4A with its duration', async (_label, fixture) => {
    const { result } = await runJob(fixtures[fixture], 4);
    expect(result).toMatchObject({ status: 'ready', media_type: 4, thumbnail: null });
    expect(result.display!.contentType).toBe('audio/mp4');
    const probe = await probeMedia(await saveBlob(result.display!.key, `${fixture}.m4a`));
    expect(probe.streams.map((stream) => stream.codec_name)).toEqual(['aac']);
    expect(probe.format.format_name).toContain('mp4');
    expect(result.duration).toBeGreaterThan(1.5);
    expect(result.duration).toBeLessThan(2.5);
  });

  it('reports a recording without a sound track as failed, with that reason', async () => {
    const silent = join(root, 'silent.mp4');
    await promisify(execFile)(locateFfmpeg().ffmpeg, [
      '-v',
      'error',
      '-y',
      '-f',
      'lavfi',
      '-i',
      'testsrc=size=160x120:rate=10:duration=1',
      '-c:v',
      'libx264',
      '-preset',
      'ultrafast',
      '-pix_fmt',
      'yuv420p',
      silent,
    ]);
    const { result } = await runJob(silent, 4, 'mov');
    expect(result).toMatchObject({ status: 'failed', media_type: 4, display: null, duration: null });
    expect(result.error).toBe('The file could not be processed: The file has no sound track');
  });

  it('reports a truncated video as failed, with a reason, instead of retrying forever', async () => {
    const { result } = await runJob(fixtures.truncatedMp4, 3);
    expect(result.status).toBe('failed');
    expect(result.error).toMatch(/could not be processed/);
    expect(result.display).toBeNull();
  });

  it('announces every result on the media topic', async () => {
    const db = (await import('better-sqlite3')).default;
    const reader = new db(join(root, 'bus.sqlite'), { readonly: true });
    const rows = reader.prepare('SELECT topic, value FROM messages').all() as { topic: string; value: string }[];
    reader.close();
    const types = rows.map((row) => (JSON.parse(row.value) as { type: string }).type);
    // One result per job; before a video's display copy, its stills.
    expect(types.filter((type) => type !== 'media.stills').length).toBe(counter);
    expect(rows.every((row) => row.topic === TOPICS.media)).toBe(true);
    expect(types).toContain('media.failed');
    expect(types).toContain('media.stills');
  });
});
