#!/usr/bin/env node
// The upload bench: one large video sent the way the web app sends it (tus resumable upload,
// the web app's PATCH size for that file, tus-js-client) through the all-in-one portal's gateway into the evidence
// service, against a bare node:http server that pipes the same requests into a file on the same
// disk, in one run. The headline is the throughput ratio, plus the portal's memory growth.
//
//   npm run bench:upload -- [--size 1GB] [--rounds 1] [--label text]
//
// It builds nothing: run `npm run build` first. All traffic goes to 127.0.0.1.
import { mkdirSync, readdirSync } from 'node:fs';
import { join, relative } from 'node:path';
import { formatProfile, summarizeProfile } from '../gateway/profile-top.mjs';
import { expectStatus, freePort, waitFor } from '../lib/http.mjs';
import { cpuMeter, mb, percentCell, rssSampler } from '../lib/measure.mjs';
import { ALL_IN_ONE_BUILT, mediaTools, noisyJpeg, paddedMp4, registerParticipant, startAllInOne } from '../lib/portal.mjs';
import {
  HOST,
  RESULTS_DIR,
  ROOT,
  UsageError,
  checkBuilt,
  describeMachine,
  gitDescribe,
  intOption as int,
  machineInfo,
  makeTempDir,
  orFail,
  parseOptions,
  printTable,
  runBench,
  stampOf,
  startChild,
  startWatchdog,
  stopChildren,
  writeResult,
} from '../lib/runner.mjs';
import { tusUpload, webChunkSize } from '../lib/tus.mjs';

const GOAL_RATIO = 0.7;
const GOAL_RSS_MB = 64;

const HELP = `Usage: npm run bench:upload -- [options]   (or: node bench/upload/run.mjs [options])

Sends one large MP4 with the tus protocol in the web app's chunks for its size (5 MiB up to
200 MiB, then about 40 chunks, at most 24 MiB: uploadChunkSize in @portal/contracts)
through the all-in-one portal, and the same requests to a bare node:http server that pipes them
into a file; reports MB/s of both, the ratio, and the portal's memory (RSS) growth meanwhile.

Options:
      --size <size>       the video's size, e.g. 1GB (default), 200MB, 512MiB (8MB to 4000MB)
  -r, --rounds <n>        rounds (targets alternate order each round)  default 1
      --chunk <MiB>       another chunk size than the web app's, e.g. 5 (1 to 100)
      --profile           start the portal with node --cpu-prof and print the top of its profile
      --label <text>      a note stored in the JSON result
  -h, --help              this text

The portal runs without its media worker (MEDIA_WORKER_ENABLED=false): the transcoding that
follows an upload is not part of this measurement. The result is also written to
bench/results/upload-<timestamp>.json. Build first: npm run build.`;

const UNITS = { b: 1, kb: 1e3, mb: 1e6, gb: 1e9, kib: 2 ** 10, mib: 2 ** 20, gib: 2 ** 30 };

function parseSize(raw) {
  const match = /^\s*(\d+(?:\.\d+)?)\s*([kmg]i?b|b)?\s*$/i.exec(raw ?? '1GB');
  const bytes = match ? Math.round(Number(match[1]) * UNITS[(match[2] ?? 'b').toLowerCase()]) : NaN;
  if (!Number.isFinite(bytes) || bytes < 8e6 || bytes > 4e9) throw new UsageError(`--size must be from 8MB to 4000MB, e.g. 1GB or 200MB (got ${raw})`);
  return bytes;
}

function settingsFromArgs() {
  const values = parseOptions({ size: { type: 'string' }, rounds: { type: 'string', short: 'r' }, chunk: { type: 'string' }, profile: { type: 'boolean' }, label: { type: 'string' } }, HELP);
  const size = parseSize(values.size ?? process.env.BENCH_UPLOAD_SIZE);
  return {
    size,
    chunkBytes: values.chunk === undefined ? webChunkSize(size) : int('chunk', values.chunk, 5, 1, 100) * 2 ** 20,
    rounds: int('rounds', values.rounds, 1, 1, 5),
    profile: values.profile ?? false,
    label: values.label ?? process.env.BENCH_LABEL ?? '',
  };
}

async function main() {
  const settings = settingsFromArgs();
  checkBuilt(ALL_IN_ONE_BUILT);
  const startedAt = new Date();
  const stamp = stampOf(startedAt);
  const tempDir = makeTempDir('portal-bench-upload-');
  // Generous: a slow disk may write 1 GB at 50 MB/s, and each round sends the file twice.
  const stopWatchdog = startWatchdog(240 + settings.rounds * 2 * (settings.size / 10e6 + 30));
  const machine = machineInfo();
  console.log(describeMachine('upload', machine));
  console.log(`  ${(settings.size / 1e6).toFixed(0)} MB video in ${settings.chunkBytes / 2 ** 20} MiB tus chunks, ${settings.rounds} round(s)`);

  const { ffmpeg } = await mediaTools();
  process.stdout.write('  making the video...');
  const video = await paddedMp4(ffmpeg, tempDir, 'long', settings.size);
  const warmVideo = await paddedMp4(ffmpeg, tempDir, 'warm', 16e6);
  console.log(' done');

  const profileDir = settings.profile ? join(RESULTS_DIR, `profiles-${stamp}`) : undefined;
  if (profileDir) mkdirSync(profileDir, { recursive: true });
  const portal = await startAllInOne(tempDir, { MEDIA_WORKER_ENABLED: 'false' }, { profileDir });
  const { cookie } = await registerParticipant(portal.url, 'upload_informant', await noisyJpeg(320, 320));
  const barePort = await freePort();
  const bareDir = join(tempDir, 'bare-files');
  mkdirSync(bareDir);
  const bare = startChild('bare', 'bench/upload/bare-server.mjs', { PORT: String(barePort), HOST, DIR: bareDir });
  const bareUrl = `http://${HOST}:${barePort}`;
  await orFail(waitFor(`${bareUrl}/healthz`, 'bare server'));

  const targets = [
    { key: 'bare', title: 'bare node:http to a file', endpoint: `${bareUrl}/files`, headers: {} },
    { key: 'portal', title: 'through the portal', endpoint: `${portal.url}/api/evidence/uploads`, headers: { cookie } },
  ];
  const processes = [portal.entry, bare];
  const metadata = { title: 'The long walk', notes: '', location: '', filename: 'long.mp4', filetype: 'video/mp4' };

  const send = async (target, path) => {
    const result = await orFail(tusUpload({ endpoint: target.endpoint, input: path, headers: target.headers, metadata, chunkSize: path === video ? settings.chunkBytes : undefined }));
    if (target.key === 'portal') {
      const item = JSON.parse(result.body);
      if (result.status !== 200 || item.media_type !== 3 || item.media_status !== 'processing') {
        throw new Error(`the portal did not take the video as a video: ${result.status} ${result.body.slice(0, 300)}`);
      }
      // Keep the disk free for the next round (the item's blobs go with it).
      await expectStatus(`${portal.url}/api/evidence/delete/${item.id}`, { method: 'DELETE', headers: { cookie } }, 200, 'deleting the uploaded item');
    } else {
      await expectStatus(result.url, { method: 'DELETE' }, 204, 'deleting the bare copy');
    }
    return result;
  };

  for (const target of targets) {
    process.stdout.write(`  warm-up: ${target.title}...`);
    await send(target, warmVideo);
    console.log(' ok');
  }

  const runs = Object.fromEntries(targets.map((t) => [t.key, []]));
  for (let round = 0; round < settings.rounds; round += 1) {
    const order = round % 2 === 0 ? targets : [...targets].reverse();
    for (const target of order) {
      process.stdout.write(`  round ${round + 1}/${settings.rounds}: ${target.title}...`);
      await new Promise((resolve) => setTimeout(resolve, 1000));
      const memory = rssSampler(processes, 100);
      const meter = cpuMeter(processes);
      const result = await send(target, video);
      const used = meter.stop();
      const rss = memory.stop();
      const lastBytesAt = result.chunks.length > 1 ? result.chunks.at(-2)[0] : 0;
      const run = {
        seconds: result.ms / 1000,
        mbPerS: mb(settings.size) / (result.ms / 1000),
        // The last PATCH: its chunk plus whatever the server does before it acknowledges.
        lastRequestSeconds: (result.ms - lastBytesAt) / 1000,
        requests: result.chunks.length + 1,
        cpu: used.cpu,
        otherCpu: used.otherCpu,
        rss: Object.fromEntries(Object.entries(rss).map(([name, r]) => [name, { startMB: mb(r.start), peakMB: mb(r.peak), endMB: mb(r.end), growthMB: mb(r.peak - r.start) }])),
        rssSamples: rss[target.key === 'portal' ? 'portal' : 'bare'].samples,
      };
      runs[target.key].push(run);
      console.log(` ${run.mbPerS.toFixed(1)} MB/s (${run.seconds.toFixed(1)} s)`);
    }
  }
  stopWatchdog();
  await stopChildren();

  const mean = (list, pick) => list.reduce((sum, r) => sum + pick(r), 0) / list.length;
  const results = Object.fromEntries(
    targets.map((t) => {
      const list = runs[t.key];
      const own = t.key === 'portal' ? 'portal' : 'bare';
      return [
        t.key,
        {
          title: t.title,
          mbPerS: mean(list, (r) => r.mbPerS),
          seconds: mean(list, (r) => r.seconds),
          lastRequestSeconds: mean(list, (r) => r.lastRequestSeconds),
          rssGrowthMB: Math.max(...list.map((r) => r.rss[own].growthMB)),
          rssStartMB: mean(list, (r) => r.rss[own].startMB),
          rssPeakMB: Math.max(...list.map((r) => r.rss[own].peakMB)),
          cpu: Object.fromEntries(Object.keys(list[0].cpu).map((n) => [n, mean(list, (r) => r.cpu[n] ?? 0)])),
          otherCpu: mean(list, (r) => r.otherCpu ?? 0),
          rounds: list,
        },
      ];
    }),
  );
  const ratio = results.portal.mbPerS / results.bare.mbPerS;

  const cpuNames = Object.keys(results.bare.cpu);
  printTable(
    ['target', 'MB/s', 'seconds', 'last PATCH s', 'RSS start MB', 'RSS peak MB', 'RSS growth MB', ...cpuNames.map((n) => `CPU ${n}`), 'CPU other'],
    targets.map((t) => {
      const r = results[t.key];
      return [t.title, r.mbPerS.toFixed(1), r.seconds.toFixed(1), r.lastRequestSeconds.toFixed(2), r.rssStartMB.toFixed(0), r.rssPeakMB.toFixed(0), r.rssGrowthMB.toFixed(1), ...cpuNames.map((n) => percentCell(r.cpu[n])), percentCell(r.otherCpu)];
    }),
  );
  console.log(`  portal / bare = ${ratio.toFixed(2)}   (goal: >= ${GOAL_RATIO}; a ratio within this run, not an absolute figure)`);
  console.log(`  portal memory growth during the upload: ${results.portal.rssGrowthMB.toFixed(1)} MB   (goal: < ${GOAL_RSS_MB} MB)`);
  console.log('  "last PATCH s": the last request, answered once the server has the whole file: the portal checks the type (ffprobe),');
  console.log('  links the file into the blob store, fsyncs it and commits the item; the bare server only fsyncs.');
  if (targets.some((t) => results[t.key].otherCpu > 0.25)) console.log('  NOTE: other work used over 25% of a core meanwhile: the machine was not quiet; repeat the run (--rounds 3)');

  let profiles;
  if (profileDir) {
    profiles = {};
    for (const file of readdirSync(profileDir).filter((f) => f.endsWith('.cpuprofile'))) {
      const path = join(profileDir, file);
      profiles[file] = relative(ROOT, path);
      console.log(`\nCPU profile ${relative(ROOT, path)} (whole process life, sign-up and warm-up included):`);
      console.log(formatProfile(summarizeProfile(path), 25));
    }
  }

  writeResult('upload', stamp, {
    bench: 'upload',
    label: settings.label,
    startedAt: startedAt.toISOString(),
    machine,
    commit: gitDescribe(),
    settings,
    path: 'tus resumable upload (POST /api/evidence/uploads, then PATCHes), as the web app sends every file',
    chunkBytes: settings.chunkBytes,
    ratio,
    goals: { ratio: GOAL_RATIO, rssGrowthMB: GOAL_RSS_MB },
    results,
    profiles,
  });
}

await runBench('upload', main);
