#!/usr/bin/env node
// The export bench: how much does the investigator's export (GET /api/evidence/export) grow the
// portal's memory while it streams a large archive? It fills an all-in-one portal with videos
// (tus uploads, as the web app sends them; no media worker, so the originals are what is
// exported), then downloads the export with originals=true through the gateway, reading and
// discarding the bytes as fast as they come, and samples the portal's resident memory meanwhile.
//
//   npm run bench:export -- [--size 200MB] [--item 20MB] [--label text]
//
// It builds nothing: run `npm run build` first. All traffic goes to 127.0.0.1.
import { ALL_IN_ONE_BUILT, ADMIN, mediaTools, noisyJpeg, paddedMp4, registerParticipant, startAllInOne } from '../lib/portal.mjs';
import { login } from '../lib/http.mjs';
import { mb, rssSampler } from '../lib/measure.mjs';
import {
  UsageError,
  checkBuilt,
  describeMachine,
  gitDescribe,
  machineInfo,
  makeTempDir,
  orFail,
  parseOptions,
  printTable,
  runBench,
  stampOf,
  startWatchdog,
  stopChildren,
  writeResult,
} from '../lib/runner.mjs';
import { tusUpload } from '../lib/tus.mjs';

const GOAL_GROWTH_MB = 64;

const HELP = `Usage: npm run bench:export -- [options]   (or: node bench/export/run.mjs [options])

Uploads videos totalling --size into the all-in-one portal (tus, without the media worker),
then downloads GET /api/evidence/export?originals=true through the gateway and reports the
archive's size, MB/s and the portal's memory (RSS) before, at its peak and its growth.

Options:
      --size <size>       media in the export, e.g. 200MB (default), 1GB, 5GB (20MB to 20GB)
      --item <size>       size of each video, e.g. 20MB (default), 100MB (8MB to 1000MB)
      --label <text>      a note stored in the JSON result
  -h, --help              this text

Needs free disk of about the size (the portal keeps one copy of each upload). The result is also
written to bench/results/export-<timestamp>.json. Build first: npm run build.`;

const UNITS = { b: 1, kb: 1e3, mb: 1e6, gb: 1e9, kib: 2 ** 10, mib: 2 ** 20, gib: 2 ** 30 };

function parseSize(name, raw, fallback, min, max) {
  const match = /^\s*(\d+(?:\.\d+)?)\s*([kmg]i?b|b)?\s*$/i.exec(raw ?? fallback);
  const bytes = match ? Math.round(Number(match[1]) * UNITS[(match[2] ?? 'b').toLowerCase()]) : NaN;
  if (!Number.isFinite(bytes) || bytes < min || bytes > max)
    throw new UsageError(`--${name} must be from ${min / 1e6}MB to ${max / 1e6}MB (got ${raw})`);
  return bytes;
}

async function main() {
  const values = parseOptions({ size: { type: 'string' }, item: { type: 'string' }, label: { type: 'string' } }, HELP);
  const size = parseSize('size', values.size ?? process.env.BENCH_EXPORT_SIZE, '200MB', 20e6, 20e9);
  const itemSize = Math.min(size, parseSize('item', values.item, '20MB', 8e6, 1e9));
  const items = Math.ceil(size / itemSize);
  const label = values.label ?? process.env.BENCH_LABEL ?? '';
  checkBuilt(ALL_IN_ONE_BUILT);
  const startedAt = new Date();
  const tempDir = makeTempDir('portal-bench-export-');
  // Uploading and exporting at a slow disk's 50 MB/s, twice over, plus start-up.
  const stopWatchdog = startWatchdog(240 + (2 * size) / 25e6);
  const machine = machineInfo();
  console.log(describeMachine('export', machine));
  console.log(`  ${items} videos of ${(itemSize / 1e6).toFixed(0)} MB: ${((items * itemSize) / 1e6).toFixed(0)} MB of media`);

  const { ffmpeg } = await mediaTools();
  const video = await paddedMp4(ffmpeg, tempDir, 'video', itemSize);
  const portal = await startAllInOne(tempDir, { MEDIA_WORKER_ENABLED: 'false' });
  const { cookie } = await registerParticipant(portal.url, 'export_informant', await noisyJpeg(320, 320));
  process.stdout.write('  uploading');
  for (let i = 0; i < items; i += 1) {
    const metadata = {
      title: `Video ${i + 1}`,
      notes: 'Filmed from the corner',
      location: '',
      filename: 'video.mp4',
      filetype: 'video/mp4',
    };
    const result = await orFail(tusUpload({ endpoint: `${portal.url}/api/evidence/uploads`, input: video, headers: { cookie }, metadata }));
    if (result.status !== 200) throw new Error(`upload ${i + 1} answered ${result.status}: ${result.body.slice(0, 300)}`);
    if (i % Math.max(1, Math.floor(items / 10)) === 0) process.stdout.write('.');
  }
  console.log(' done');

  const adminCookie = await login(portal.url, ADMIN);
  // Settle: whatever the uploads left in flight (relay, checkpoints, garbage) before the baseline.
  await new Promise((resolve) => setTimeout(resolve, 3000));
  const memory = rssSampler([portal.entry], 50);
  const started = Date.now();
  const response = await fetch(`${portal.url}/api/evidence/export?originals=true`, { headers: { cookie: adminCookie } });
  if (response.status !== 200 || !response.body) throw new Error(`the export answered ${response.status}: ${await response.text()}`);
  let bytes = 0;
  for await (const chunk of response.body) bytes += chunk.byteLength;
  const seconds = (Date.now() - started) / 1000;
  const rss = memory.stop().portal;
  stopWatchdog();
  await stopChildren();

  if (bytes < items * itemSize) throw new Error(`the archive (${bytes} bytes) is smaller than the media (${items * itemSize} bytes)`);
  const growthMB = mb(rss.peak - rss.start);
  printTable(
    ['archive MB', 'seconds', 'MB/s', 'RSS start MB', 'RSS peak MB', 'RSS growth MB'],
    [
      [
        mb(bytes).toFixed(0),
        seconds.toFixed(1),
        (mb(bytes) / seconds).toFixed(1),
        mb(rss.start).toFixed(0),
        mb(rss.peak).toFixed(0),
        growthMB.toFixed(1),
      ],
    ],
  );
  console.log(`  portal memory growth during the export: ${growthMB.toFixed(1)} MB   (goal: < ${GOAL_GROWTH_MB} MB, whatever the size)`);

  writeResult('export', stampOf(startedAt), {
    bench: 'export',
    label,
    startedAt: startedAt.toISOString(),
    machine,
    commit: gitDescribe(),
    settings: { size, itemSize, items },
    archiveBytes: bytes,
    seconds,
    rss: { startMB: mb(rss.start), peakMB: mb(rss.peak), endMB: mb(rss.end), growthMB },
    rssSamples: rss.samples,
    goalGrowthMB: GOAL_GROWTH_MB,
    passed: growthMB < GOAL_GROWTH_MB,
  });
}

await runBench('export', main);
