#!/usr/bin/env node
// The upload bench: one large video sent the way the web app sends it (tus resumable upload,
// the web app's PATCH size for that file, tus-js-client) through the all-in-one portal's gateway into the evidence
// service, against a bare node:http server that pipes the same requests into a file on the same
// disk and against tusd (the reference tus server, when installed), in one run. The headlines are
// the throughput ratios, plus the portal's memory growth.
//
//   npm run bench:upload -- [--size 1GB] [--chunk-mib 5,24] [--rounds 1] [--label text]
//
// It builds nothing: run `npm run build` first. All traffic goes to 127.0.0.1.
import { mkdirSync, readdirSync } from 'node:fs';
import { loadavg } from 'node:os';
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
import { TUSD_INSTALL, locateTusd, startTusd } from './tusd.mjs';

const GOAL_RATIO = 0.7;
/** With 5 MiB chunks (phones): portal / bare and portal / tusd. */
const GOAL_SMALL_CHUNKS = { bare: 0.85, tusd: 0.9 };
const GOAL_RSS_MB = 64;

const HELP = `Usage: npm run bench:upload -- [options]   (or: node bench/upload/run.mjs [options])

Sends one large MP4 with the tus protocol in the web app's chunks for its size (5 MiB up to
200 MiB, then about 40 chunks, at most 24 MiB: uploadChunkSize in @portal/contracts)
through the all-in-one portal, and the same requests to a bare node:http server that pipes them
into a file and to tusd (the reference tus server, Go); reports MB/s of each, the ratios, and
the portal's memory (RSS) growth meanwhile.

Options:
      --size <size>       the video's size, e.g. 1GB (default), 200MB, 512MiB (8MB to 4000MB)
  -r, --rounds <n>        rounds (targets alternate order each round)  default 1
      --chunk-mib <list>  chunk sizes in MiB instead of the web app's, e.g. 5 or 5,24 (1 to 100
                          each; every size in every round)   (--chunk is the same option)
      --no-tusd           leave tusd out even when it is installed
      --compare-loopback  a second portal with UPLOADS_IN_PROCESS=false (the chunks go from the
                          gateway to evidence over loopback HTTP, as before), in the same rounds
      --profile           start the portal with node --cpu-prof and print the top of its profile
      --label <text>      a note stored in the JSON result
  -h, --help              this text

The portal runs without its media worker (MEDIA_WORKER_ENABLED=false): the transcoding that
follows an upload is not part of this measurement. The result is also written to
bench/results/upload-<timestamp>.json. Build first: npm run build.

tusd is found at TUSD_PATH, else where \`go install\` puts it ($(go env GOPATH)/bin/tusd), else on
PATH. The bench never downloads it; without it, that baseline is skipped. Install it with:
  ${TUSD_INSTALL}`;

const UNITS = { b: 1, kb: 1e3, mb: 1e6, gb: 1e9, kib: 2 ** 10, mib: 2 ** 20, gib: 2 ** 30 };

function parseSize(raw) {
  const match = /^\s*(\d+(?:\.\d+)?)\s*([kmg]i?b|b)?\s*$/i.exec(raw ?? '1GB');
  const bytes = match ? Math.round(Number(match[1]) * UNITS[(match[2] ?? 'b').toLowerCase()]) : NaN;
  if (!Number.isFinite(bytes) || bytes < 8e6 || bytes > 4e9)
    throw new UsageError(`--size must be from 8MB to 4000MB, e.g. 1GB or 200MB (got ${raw})`);
  return bytes;
}

function settingsFromArgs() {
  const values = parseOptions(
    {
      size: { type: 'string' },
      rounds: { type: 'string', short: 'r' },
      'chunk-mib': { type: 'string' },
      chunk: { type: 'string' },
      'no-tusd': { type: 'boolean' },
      'compare-loopback': { type: 'boolean' },
      profile: { type: 'boolean' },
      label: { type: 'string' },
    },
    HELP,
  );
  const size = parseSize(values.size ?? process.env.BENCH_UPLOAD_SIZE);
  const chunkList = values['chunk-mib'] ?? values.chunk;
  const chunkSizes =
    chunkList === undefined
      ? [webChunkSize(size)]
      : [...new Set(chunkList.split(',').map((raw) => int('chunk-mib', raw.trim(), 5, 1, 100) * 2 ** 20))];
  return {
    size,
    chunkSizes,
    rounds: int('rounds', values.rounds, 1, 1, 5),
    tusd: !(values['no-tusd'] ?? false),
    compareLoopback: values['compare-loopback'] ?? false,
    profile: values.profile ?? false,
    label: values.label ?? process.env.BENCH_LABEL ?? '',
  };
}

async function main() {
  const settings = settingsFromArgs();
  checkBuilt(ALL_IN_ONE_BUILT);
  const tusd = settings.tusd ? locateTusd() : null;
  const startedAt = new Date();
  const stamp = stampOf(startedAt);
  const tempDir = makeTempDir('portal-bench-upload-');
  const targetCount = 2 + (tusd ? 1 : 0) + (settings.compareLoopback ? 1 : 0);
  // Generous: a slow disk may write 1 GB at 50 MB/s, and each round sends the file to every target in every chunk size.
  const stopWatchdog = startWatchdog(240 + settings.rounds * settings.chunkSizes.length * targetCount * (settings.size / 10e6 + 30));
  const machine = machineInfo();
  const mib = (bytes) => bytes / 2 ** 20;
  console.log(describeMachine('upload', machine));
  console.log(
    `  ${(settings.size / 1e6).toFixed(0)} MB video in ${settings.chunkSizes.map(mib).join(' and ')} MiB tus chunks, ${settings.rounds} round(s)`,
  );
  if (!settings.tusd) console.log('  tusd: left out (--no-tusd)');
  else if (!tusd)
    console.log(
      `  tusd: not found (TUSD_PATH, $(go env GOPATH)/bin, PATH): that baseline is skipped. Install it with:\n    ${TUSD_INSTALL}`,
    );
  else console.log(`  tusd: ${tusd.path} (version ${tusd.version})`);

  const { ffmpeg } = await mediaTools();
  process.stdout.write('  making the video...');
  const video = await paddedMp4(ffmpeg, tempDir, 'long', settings.size);
  const warmVideo = await paddedMp4(ffmpeg, tempDir, 'warm', 16e6);
  console.log(' done');

  const profileDir = settings.profile ? join(RESULTS_DIR, `profiles-${stamp}`) : undefined;
  if (profileDir) mkdirSync(profileDir, { recursive: true });
  // BENCH_PORTAL_NODE_OPTIONS: Node options for the portals only (e.g. V8 heap settings to try).
  const portalEnv = {
    MEDIA_WORKER_ENABLED: 'false',
    ...(process.env.BENCH_PORTAL_NODE_OPTIONS ? { NODE_OPTIONS: process.env.BENCH_PORTAL_NODE_OPTIONS } : {}),
  };
  const portalNodeArgs = process.env.BENCH_PORTAL_NODE_ARGS ? process.env.BENCH_PORTAL_NODE_ARGS.split(' ') : [];
  const portal = await startAllInOne(tempDir, portalEnv, { profileDir, nodeArgs: portalNodeArgs });
  const face = await noisyJpeg(320, 320);
  const { cookie } = await registerParticipant(portal.url, 'upload_informant', face);
  const loopback = settings.compareLoopback
    ? await startAllInOne(
        tempDir,
        { ...portalEnv, UPLOADS_IN_PROCESS: 'false' },
        { name: 'portal-loopback', profileDir, nodeArgs: portalNodeArgs },
      )
    : null;
  const loopbackCookie = loopback ? (await registerParticipant(loopback.url, 'upload_informant', face)).cookie : null;
  const barePort = await freePort();
  const bareDir = join(tempDir, 'bare-files');
  mkdirSync(bareDir);
  const bare = startChild('bare', 'bench/upload/bare-server.mjs', { PORT: String(barePort), HOST, DIR: bareDir });
  const bareUrl = `http://${HOST}:${barePort}`;
  await orFail(waitFor(`${bareUrl}/healthz`, 'bare server'));
  const tusdServer = tusd ? await startTusd(tusd, tempDir) : null;

  const targets = [
    { key: 'bare', process: 'bare', title: 'bare node:http to a file', endpoint: `${bareUrl}/files`, headers: {} },
    ...(tusdServer ? [{ key: 'tusd', process: 'tusd', title: 'tusd (Go, file store)', endpoint: tusdServer.endpoint, headers: {} }] : []),
    {
      key: 'portal',
      process: 'portal',
      title: 'through the portal',
      endpoint: `${portal.url}/api/evidence/uploads`,
      headers: { cookie },
      portal,
    },
    ...(loopback
      ? [
          {
            key: 'loopback',
            process: 'portal-loopback',
            title: 'portal, chunks over loopback',
            endpoint: `${loopback.url}/api/evidence/uploads`,
            headers: { cookie: loopbackCookie },
            portal: loopback,
          },
        ]
      : []),
  ];
  const processes = [portal.entry, bare, ...(tusdServer ? [tusdServer.entry] : []), ...(loopback ? [loopback.entry] : [])];
  const metadata = { title: 'The long walk', notes: '', location: '', filename: 'long.mp4', filetype: 'video/mp4' };

  const send = async (target, path, chunkSize) => {
    const result = await orFail(tusUpload({ endpoint: target.endpoint, input: path, headers: target.headers, metadata, chunkSize }));
    if (target.portal) {
      const item = JSON.parse(result.body);
      if (result.status !== 200 || item.media_type !== 3 || item.media_status !== 'processing') {
        throw new Error(`the portal did not take the video as a video: ${result.status} ${result.body.slice(0, 300)}`);
      }
      // Keep the disk free for the next round (the item's blobs go with it).
      await expectStatus(
        `${target.portal.url}/api/evidence/delete/${item.id}`,
        { method: 'DELETE', headers: target.headers },
        200,
        'deleting the uploaded item',
      );
    } else {
      await expectStatus(
        new URL(result.url, target.endpoint).href,
        { method: 'DELETE', headers: { 'Tus-Resumable': '1.0.0' } },
        204,
        `deleting the ${target.key} copy`,
      );
    }
    return result;
  };

  for (const target of targets) {
    process.stdout.write(`  warm-up: ${target.title}...`);
    await send(target, warmVideo, Math.min(...settings.chunkSizes));
    console.log(' ok');
  }

  // runs[chunkMiB][target] = list of rounds
  // When each portal's measured uploads ran (monotonic µs): the profile is summarised over these.
  const profileWindows = {};
  const runs = Object.fromEntries(settings.chunkSizes.map((c) => [mib(c), Object.fromEntries(targets.map((t) => [t.key, []]))]));
  for (let round = 0; round < settings.rounds; round += 1) {
    // Each round and chunk size starts with another target, so that none always goes first.
    for (const [c, chunkSize] of settings.chunkSizes.entries()) {
      const shift = (round + c) % targets.length;
      const order = [...targets.slice(shift), ...targets.slice(0, shift)];
      for (const target of order) {
        process.stdout.write(`  round ${round + 1}/${settings.rounds}, ${mib(chunkSize)} MiB chunks: ${target.title}...`);
        await new Promise((resolve) => setTimeout(resolve, 1000));
        const memory = rssSampler(processes, 100);
        const meter = cpuMeter(processes);
        const from = Number(process.hrtime.bigint() / 1000n);
        const result = await send(target, video, chunkSize);
        const used = meter.stop();
        (profileWindows[target.process] ??= []).push([from, Number(process.hrtime.bigint() / 1000n)]);
        const rss = memory.stop();
        const lastBytesAt = result.chunks.length > 1 ? result.chunks.at(-2)[0] : 0;
        const seconds = result.ms / 1000;
        const ownCpu = used.cpu[target.process] ?? null;
        const run = {
          seconds,
          mbPerS: mb(settings.size) / seconds,
          // The last PATCH: its chunk plus whatever the server does before it acknowledges.
          lastRequestSeconds: (result.ms - lastBytesAt) / 1000,
          requests: result.chunks.length + 1,
          // CPU milliseconds the server spent per MB of the file (its share of a core over the upload).
          cpuMsPerMB: ownCpu === null ? null : (ownCpu * seconds * 1000) / mb(settings.size),
          cpu: used.cpu,
          otherCpu: used.otherCpu,
          rss: Object.fromEntries(
            Object.entries(rss).map(([name, r]) => [
              name,
              { startMB: mb(r.start), peakMB: mb(r.peak), endMB: mb(r.end), growthMB: mb(r.peak - r.start) },
            ]),
          ),
          rssSamples: rss[target.process].samples,
        };
        runs[mib(chunkSize)][target.key].push(run);
        console.log(` ${run.mbPerS.toFixed(1)} MB/s (${run.seconds.toFixed(1)} s, ${run.cpuMsPerMB?.toFixed(2) ?? '?'} ms CPU/MB)`);
      }
    }
  }
  stopWatchdog();
  await stopChildren();

  const mean = (list, pick) => list.reduce((sum, r) => sum + pick(r), 0) / list.length;
  const median = (values) => {
    const sorted = [...values].sort((a, b) => a - b);
    const middle = Math.floor(sorted.length / 2);
    return sorted.length % 2 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2;
  };
  const byChunk = {};
  for (const chunkSize of settings.chunkSizes) {
    const key = mib(chunkSize);
    const results = Object.fromEntries(
      targets.map((t) => {
        const list = runs[key][t.key];
        return [
          t.key,
          {
            title: t.title,
            mbPerS: mean(list, (r) => r.mbPerS),
            medianMbPerS: median(list.map((r) => r.mbPerS)),
            seconds: mean(list, (r) => r.seconds),
            lastRequestSeconds: mean(list, (r) => r.lastRequestSeconds),
            cpuMsPerMB: median(list.map((r) => r.cpuMsPerMB ?? NaN)),
            rssGrowthMB: Math.max(...list.map((r) => r.rss[t.process].growthMB)),
            rssStartMB: mean(list, (r) => r.rss[t.process].startMB),
            rssPeakMB: Math.max(...list.map((r) => r.rss[t.process].peakMB)),
            cpu: Object.fromEntries(Object.keys(list[0].cpu).map((n) => [n, mean(list, (r) => r.cpu[n] ?? 0)])),
            otherCpu: mean(list, (r) => r.otherCpu ?? 0),
            rounds: list,
          },
        ];
      }),
    );
    // Ratios of the mean MB/s (as before), and the median of the per-round ratios (each round's
    // targets ran one after the other, minutes apart at most).
    const roundRatios = (over) => runs[key].portal.map((r, i) => r.mbPerS / runs[key][over][i].mbPerS);
    const ratios = {
      portalOverBare: results.portal.mbPerS / results.bare.mbPerS,
      portalOverBareMedianOfRounds: median(roundRatios('bare')),
      ...(results.loopback
        ? {
            loopbackOverBare: results.loopback.mbPerS / results.bare.mbPerS,
            portalOverLoopback: results.portal.mbPerS / results.loopback.mbPerS,
          }
        : {}),
      ...(results.tusd
        ? {
            portalOverTusd: results.portal.mbPerS / results.tusd.mbPerS,
            portalOverTusdMedianOfRounds: median(roundRatios('tusd')),
            tusdOverBare: results.tusd.mbPerS / results.bare.mbPerS,
          }
        : {}),
    };
    byChunk[key] = { chunkBytes: chunkSize, ratios, results };
  }

  const cpuNames = Object.keys(byChunk[mib(settings.chunkSizes[0])].results.bare.cpu);
  printTable(
    [
      'chunks',
      'target',
      'MB/s',
      'seconds',
      'last PATCH s',
      'CPU ms/MB',
      'RSS start MB',
      'RSS peak MB',
      'RSS growth MB',
      ...cpuNames.map((n) => `CPU ${n}`),
      'CPU other',
    ],
    Object.entries(byChunk).flatMap(([key, { results }]) =>
      targets.map((t) => {
        const r = results[t.key];
        return [
          `${key} MiB`,
          r.title,
          r.mbPerS.toFixed(1),
          r.seconds.toFixed(1),
          r.lastRequestSeconds.toFixed(2),
          Number.isFinite(r.cpuMsPerMB) ? r.cpuMsPerMB.toFixed(2) : '?',
          r.rssStartMB.toFixed(0),
          r.rssPeakMB.toFixed(0),
          r.rssGrowthMB.toFixed(1),
          ...cpuNames.map((n) => percentCell(r.cpu[n])),
          percentCell(r.otherCpu),
        ];
      }),
    ),
  );
  for (const [key, { ratios, results }] of Object.entries(byChunk)) {
    const small = Number(key) <= 5;
    const perRound = (over) => (settings.rounds > 1 ? `; per round, median ${ratios[`portalOver${over}MedianOfRounds`].toFixed(2)}` : '');
    console.log(
      `  ${key} MiB chunks: portal / bare = ${ratios.portalOverBare.toFixed(2)}${perRound('Bare')}   (goal: >= ${small ? GOAL_SMALL_CHUNKS.bare : GOAL_RATIO})`,
    );
    if (ratios.portalOverTusd !== undefined) {
      console.log(
        `  ${key} MiB chunks: portal / tusd = ${ratios.portalOverTusd.toFixed(2)}${perRound('Tusd')}   (goal: >= ${GOAL_SMALL_CHUNKS.tusd}); tusd / bare = ${ratios.tusdOverBare.toFixed(2)}`,
      );
    }
    if (ratios.portalOverLoopback !== undefined) {
      console.log(
        `  ${key} MiB chunks: portal / portal with the loopback hop = ${ratios.portalOverLoopback.toFixed(2)}; loopback / bare = ${ratios.loopbackOverBare.toFixed(2)}   (CPU ms/MB ${results.portal.cpuMsPerMB.toFixed(2)} against ${results.loopback.cpuMsPerMB.toFixed(2)})`,
      );
    }
    console.log(
      `  ${key} MiB chunks: portal memory growth during the upload: ${results.portal.rssGrowthMB.toFixed(1)} MB   (goal: < ${GOAL_RSS_MB} MB)`,
    );
  }
  console.log('  (ratios within this run, not absolute figures)');
  console.log('  "last PATCH s": the last request, answered once the server has the whole file: the portal checks the type (ffprobe),');
  console.log('  links the file into the blob store, fsyncs it and commits the item; the bare server only fsyncs; tusd does neither.');
  console.log('  "CPU ms/MB": the CPU the server process used per MB of the file (median of the rounds).');
  if (Object.values(byChunk).some(({ results }) => targets.some((t) => results[t.key].otherCpu > 0.25))) {
    console.log('  NOTE: other work used over 25% of a core meanwhile: the machine was not quiet; repeat the run (--rounds 3)');
  }

  let profiles;
  if (profileDir) {
    profiles = {};
    // The main thread's profile (worker threads' ones, from ffprobe's launcher, are kept beside it).
    for (const file of readdirSync(profileDir).filter((f) => f.endsWith('.cpuprofile') && !f.includes('.thread-'))) {
      const path = join(profileDir, file);
      profiles[file] = relative(ROOT, path);
      const windows = profileWindows[file.replace(/\.cpuprofile$/, '')];
      console.log(`\nCPU profile ${relative(ROOT, path)} (${windows ? 'during the measured uploads only' : 'whole process life'}):`);
      console.log(formatProfile(summarizeProfile(path, windows ? { windows } : {}), 30));
    }
  }

  writeResult('upload', stamp, {
    bench: 'upload',
    label: settings.label,
    startedAt: startedAt.toISOString(),
    machine: { ...machine, loadAverageAtEnd: loadavg().map((v) => Math.round(v * 100) / 100) },
    commit: gitDescribe(),
    settings,
    tusd: tusd ? { path: tusd.path, version: tusd.version } : null,
    path: 'tus resumable upload (POST /api/evidence/uploads, then PATCHes), as the web app sends every file',
    goals: { ratio: GOAL_RATIO, smallChunks: GOAL_SMALL_CHUNKS, rssGrowthMB: GOAL_RSS_MB },
    byChunk,
    profiles,
  });
}

await runBench('upload', main);
