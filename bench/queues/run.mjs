#!/usr/bin/env node
// bench/queues: how long a photo takes to be ready while long videos are being transcoded, and
// how many videos an hour get done, with the media queues split (stills and audio/video, each at
// its own concurrency: the media worker's defaults) against the baseline measured in the same
// run: one shared queue worked one job at a time, as before the split.
//
// Each mode, on fresh SQLite job tables, a fresh blob folder and event bus, in this process as in
// the all-in-one portal: the videos are queued, and once the first one is being transcoded a photo
// is queued every --photo-every seconds. The jobs run through the real job handler (sharp for
// photos, ffmpeg for videos). A photo's time to ready: from its job being queued to its derivatives
// stored and its result published. A photo processed on an idle worker is measured first, as the
// floor.
//
//   npm run build && npm run bench:queues -- [--videos 2] [--video-seconds 90] [--photos 10] [--photo-every 2]
import { execFile } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { promisify } from 'node:util';
import { median, percentile } from '../lib/measure.mjs';
import { noisyJpeg } from '../lib/portal.mjs';
import {
  ROOT,
  checkBuilt,
  gitDescribe,
  intOption as int,
  machineSummary,
  makeTempDir,
  orFail,
  parseOptions,
  printTable,
  runBench,
  startWatchdog,
  stampOf,
  writeResult,
} from '../lib/runner.mjs';

const run = promisify(execFile);
const BUILT = [
  'packages/contracts/dist/index.js',
  'packages/platform/dist/index.js',
  'services/media-worker/dist/index.js',
  'services/media-worker/dist/media-job-handler.js',
];
const TARGET_P95_S = 5;
const MEDIA = { image: 2, video: 3 }; // MEDIA_TYPES

const HELP = `Usage: npm run bench:queues -- [options]   (or: node bench/queues/run.mjs [options])

Queues long videos, then photos while the videos transcode, once through one shared media queue
worked one job at a time (the baseline: as before the split) and once through the split queues
with the media worker's default settings; prints each photo's time to ready (p50, p95, max) and
the videos' throughput in both.

Options:
      --videos <n>         videos queued first                                   default 2
      --video-seconds <s>  each video's length (1080p30 H.264 + AAC, ~12 Mbit/s)  default 90
      --photos <n>         photos queued while the videos transcode               default 10
      --photo-every <s>    the pause between two photos                           default 2
      --photo <WxH>        the photos' size (noisy JPEG, like a phone camera's)   default 4000x3000
      --order <list>       the modes, in the order they run                       default shared,split
                           (split: the worker's defaults, ffmpeg at MEDIA_AV_NICE 10;
                           split-nice0: the same queues with ffmpeg at the worker's priority)
      --label <text>       a note stored in the JSON result
  -h, --help               this text

The result is also written to bench/results/queues-<timestamp>.json. Build first: npm run build.`;

function settingsFromArgs() {
  const values = parseOptions(
    {
      videos: { type: 'string' },
      'video-seconds': { type: 'string' },
      photos: { type: 'string' },
      'photo-every': { type: 'string' },
      photo: { type: 'string' },
      order: { type: 'string' },
      label: { type: 'string' },
    },
    HELP,
  );
  const photo = /^(\d+)x(\d+)$/.exec(values.photo ?? '4000x3000');
  const order = (values.order ?? 'shared,split').split(',').map((mode) => mode.trim());
  if (order.length === 0 || order.some((mode) => !['shared', 'split', 'split-nice0'].includes(mode)))
    throw new Error('--order lists shared, split and split-nice0');
  return {
    videos: int('videos', values.videos, 2, 1, 20),
    videoSeconds: int('video-seconds', values['video-seconds'], 90, 2, 1200),
    photos: int('photos', values.photos, 10, 1, 500),
    photoEvery: int('photo-every', values['photo-every'], 2, 0, 600),
    width: int('photo width', photo?.[1], 4000, 64, 8000),
    height: int('photo height', photo?.[2], 3000, 64, 8000),
    order,
    label: values.label ?? null,
  };
}

const wait = (ms) => new Promise((resolve) => setTimeout(resolve, ms));
const s = (ms) => (ms === null ? '-' : (ms / 1000).toFixed(ms < 10_000 ? 2 : 1));

await runBench('queues', async () => {
  const settings = settingsFromArgs();
  checkBuilt(BUILT);
  const dir = makeTempDir('bench-queues-');
  const budget = 120 + 3 * settings.order.length * settings.videos * settings.videoSeconds * 4 + settings.photos * settings.photoEvery * 2;
  const stopWatchdog = startWatchdog(budget);
  const load = (file) => import(pathToFileURL(join(ROOT, file)).href);
  const contracts = await load('packages/contracts/dist/index.js');
  const platform = await load('packages/platform/dist/index.js');
  const worker = await load('services/media-worker/dist/index.js');
  const { mediaJobHandler } = await load('services/media-worker/dist/media-job-handler.js');
  const { ffmpeg } = platform.locateFfmpeg();
  const logger = platform.createLogger({ service: 'bench-queues', level: process.env.BENCH_LOG_LEVEL ?? 'warn' });

  console.log(
    `making ${settings.videos > 1 ? 'the video' : 'a video'}: ${settings.videoSeconds} s 1080p30 H.264/AAC, and a ${settings.width}x${settings.height} photo...`,
  );
  const video = join(dir, 'phone.mp4');
  await run(ffmpeg, [
    '-v',
    'error',
    '-y',
    '-f',
    'lavfi',
    '-i',
    `testsrc2=size=1920x1080:rate=30:duration=${settings.videoSeconds}`,
    '-f',
    'lavfi',
    '-i',
    `sine=frequency=440:beep_factor=4:duration=${settings.videoSeconds}`,
    '-c:v',
    'libx264',
    '-preset',
    'veryfast',
    '-b:v',
    '12M',
    '-maxrate',
    '14M',
    '-bufsize',
    '16M',
    '-pix_fmt',
    'yuv420p',
    '-c:a',
    'aac',
    '-b:a',
    '128k',
    '-shortest',
    video,
  ]);
  const photo = join(dir, 'photo.jpg');
  writeFileSync(photo, await noisyJpeg(settings.width, settings.height));

  let serial = 0;
  /** One mode's stores and workers: fresh job tables, blobs and bus in a folder of their own. */
  async function openStores(name, ffmpegNiceness = 0) {
    const base = join(dir, `${name}-${++serial}`);
    const blobs = new platform.FsBlobStore(join(base, 'blobs'));
    const bus = new platform.SqliteEventBus({ file: join(base, 'bus.sqlite'), logger });
    const open = (queue) => new platform.SqliteJobQueue({ file: join(base, 'jobs.sqlite'), queue, logger });
    const handler = mediaJobHandler({ blobs, bus, logger, workRoot: join(base, 'work'), ffmpegNiceness });
    const finished = new Map();
    const timed = async (job) => {
      const result = await handler(job);
      if (result?.status !== 'ready') throw new Error(`job ${job.id} ended ${result?.status}: ${result?.error}`);
      finished.set(job.id, performance.now());
      return result;
    };
    let n = 0;
    /** Stores an original (the upload's work, not timed) and answers the job to queue. */
    const original = async (file, mediaType) => {
      const id = `item-${++n}`;
      const originalKey = `evidence/${id}/r1/original`;
      await blobs.put(originalKey, readFileSync(file), { contentType: 'application/octet-stream' });
      return {
        id: `${id}.r1`,
        data: { evidenceId: id, revision: 1, media_type: mediaType, originalKey, outputPrefix: `evidence/${id}/r1/` },
      };
    };
    return { open, timed, finished, original, close: () => bus.close() };
  }

  // The floor: photos processed one after another on an idle worker.
  const alone = [];
  {
    const stores = await openStores('alone');
    const queue = stores.open(contracts.MEDIA_QUEUES.stills);
    const running = await queue.work(stores.timed, { concurrency: 1 });
    for (let i = 0; i < 4; i++) {
      const { id, data } = await stores.original(photo, MEDIA.image);
      const queued = performance.now();
      await queue.add('process-media', data, { jobId: id });
      await orFail(waitUntil(() => stores.finished.has(id)));
      if (i > 0) alone.push(stores.finished.get(id) - queued); // the first one warms up
    }
    await running.close();
    await queue.close();
    await stores.close();
  }
  console.log(`a photo on an idle worker: ${s(median(alone))} s (median of ${alone.length})`);

  const results = {};
  for (const mode of settings.order) {
    const workerSettings = worker.mediaWorkerSettingsFromEnv(mode === 'split-nice0' ? { MEDIA_AV_NICE: '0' } : {});
    // The shared queue as before the split (ffmpeg at the worker's priority); the split modes with
    // the worker's settings (the product's default niceness, or 0).
    const stores = await openStores(mode, mode === 'shared' ? 0 : workerSettings.ffmpegNiceness);
    let queueFor;
    let queues;
    let running;
    let plan;
    if (mode === 'shared') {
      // As before the split: every media job in one queue, MEDIA_WORKER_CONCURRENCY's default 1.
      const shared = stores.open(contracts.LEGACY_MEDIA_QUEUE);
      queues = [shared];
      queueFor = () => shared;
      running = await shared.work(stores.timed, { concurrency: 1 });
      plan = { [shared.name]: 1 };
    } else {
      const set = contracts.openMediaQueues(stores.open);
      queues = contracts.mediaQueueList(set);
      queueFor = (mediaType) => set[contracts.mediaQueueKindFor(mediaType)];
      running = await worker.workMediaQueues(set, workerSettings, () => stores.timed);
      plan = Object.fromEntries(worker.mediaQueuePlan(set, workerSettings).map(({ queue, concurrency }) => [queue.name, concurrency]));
    }
    console.log(
      `\n${mode}: queues ${Object.entries(plan)
        .map(([name, c]) => `${name} (concurrency ${c})`)
        .join(', ')}; ffmpeg niceness ${mode === 'shared' ? 0 : workerSettings.ffmpegNiceness}`,
    );
    const videos = [];
    const photos = [];
    const started = performance.now();
    for (let i = 0; i < settings.videos; i++) {
      const { id, data } = await stores.original(video, MEDIA.video);
      await queueFor(MEDIA.video).add('process-media', data, { jobId: id });
      videos.push({ id, queued: performance.now() });
    }
    // The photos come once a video is being transcoded.
    await orFail(waitUntil(async () => (await queueFor(MEDIA.video).counts()).active > 0));
    for (let i = 0; i < settings.photos; i++) {
      if (i > 0) await wait(settings.photoEvery * 1000);
      const { id, data } = await stores.original(photo, MEDIA.image);
      const queued = performance.now();
      await queueFor(MEDIA.image).add('process-media', data, { jobId: id });
      photos.push({ id, queued, videosDoneWhenQueued: videos.filter((v) => stores.finished.has(v.id)).length });
    }
    await orFail(waitUntil(() => [...videos, ...photos].every((job) => stores.finished.has(job.id)), 500));
    const times = photos.map((p) => stores.finished.get(p.id) - p.queued);
    const lastVideo = Math.max(...videos.map((v) => stores.finished.get(v.id)));
    const videoSpan = lastVideo - started;
    const whileVideos = photos.filter((p) => stores.finished.get(p.id) < lastVideo).length;
    // All the work, photos included: the same in both modes, so this shows what the machine did
    // (videos finish later in the split mode by about the photos' work, now done beside them).
    const allDone = Math.max(...[...videos, ...photos].map((job) => stores.finished.get(job.id))) - started;
    results[mode] = {
      queues: plan,
      photoSeconds: times.map((t) => t / 1000),
      photoP50: percentile(times, 50),
      photoP95: percentile(times, 95),
      photoMax: Math.max(...times),
      photosReadyWhileVideosRan: whileVideos,
      videoSpanSeconds: videoSpan / 1000,
      videosPerHour: (settings.videos / videoSpan) * 3600_000,
      allDoneSeconds: allDone / 1000,
    };
    console.log(
      `  photos ready: p50 ${s(results[mode].photoP50)} s, p95 ${s(results[mode].photoP95)} s, max ${s(results[mode].photoMax)} s; ${whileVideos} of ${photos.length} ready before the last video`,
    );
    console.log(
      `  videos: ${settings.videos} in ${s(videoSpan)} s (${results[mode].videosPerHour.toFixed(1)} an hour); everything done in ${s(allDone)} s`,
    );
    await running.close();
    for (const queue of queues) await queue.close();
    await stores.close();
  }
  stopWatchdog();

  const floor = median(alone);
  const rows = settings.order.map((mode) => {
    const r = results[mode];
    return [
      mode === 'shared' ? 'one shared queue (before)' : mode === 'split' ? 'stills + audio/video queues' : 'split, ffmpeg not niced',
      s(r.photoP50),
      s(r.photoP95),
      s(r.photoMax),
      (r.photoP95 / floor).toFixed(1),
      `${r.photosReadyWhileVideosRan}/${settings.photos}`,
      r.videosPerHour.toFixed(1),
      s(r.allDoneSeconds * 1000),
    ];
  });
  printTable(['mode', 'photo p50 s', 'photo p95 s', 'max s', 'p95 / idle', 'during videos', 'videos/hour', 'all done s'], rows);
  const summary = {};
  if (results.shared && results.split) {
    summary.photoP95Ratio = results.split.photoP95 / results.shared.photoP95;
    summary.videoThroughputRatio = results.split.videosPerHour / results.shared.videosPerHour;
    summary.allDoneRatio = results.split.allDoneSeconds / results.shared.allDoneSeconds;
    console.log(
      `split / shared: photo p95 ${summary.photoP95Ratio.toFixed(3)}, video throughput ${summary.videoThroughputRatio.toFixed(3)}, time for all the work ${summary.allDoneRatio.toFixed(3)}`,
    );
  }
  if (results.split && results['split-nice0']) {
    summary.niceP95Ratio = results.split.photoP95 / results['split-nice0'].photoP95;
    summary.niceVideoRatio = results.split.videosPerHour / results['split-nice0'].videosPerHour;
    console.log(`ffmpeg niced / not: photo p95 ${summary.niceP95Ratio.toFixed(3)}, video throughput ${summary.niceVideoRatio.toFixed(3)}`);
  }
  if (results.split) {
    const met = results.split.photoP95 <= TARGET_P95_S * 1000;
    summary.targetMet = met && (summary.videoThroughputRatio ?? 1) >= 0.95;
    console.log(
      `target: photo p95 <= ${TARGET_P95_S} s while videos transcode: ${met ? 'met' : 'NOT met'} (${s(results.split.photoP95)} s); video throughput no worse (>= 0.95 of shared, the run's noise): ${summary.videoThroughputRatio === undefined ? 'not measured' : summary.videoThroughputRatio >= 0.95 ? 'met' : 'NOT met'}`,
    );
  }
  console.log(`a photo on an idle worker: ${s(floor)} s; machine load average at start ${machineSummary().loadAverageAtStart.join(' ')}`);
  writeResult('queues', stampOf(new Date()), {
    bench: 'queues',
    label: settings.label,
    date: new Date().toISOString(),
    commit: gitDescribe(['services/media-worker', 'packages/platform', 'packages/contracts']),
    machine: machineSummary(),
    settings,
    target: { photoP95Seconds: TARGET_P95_S, videoThroughputRatio: 1 },
    photoAloneSeconds: alone.map((t) => t / 1000),
    results,
    summary,
  });
});

async function waitUntil(check, intervalMs = 50) {
  while (!(await check())) await wait(intervalMs);
}
