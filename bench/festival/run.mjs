#!/usr/bin/env node
// The festival bench: many participants (each with an account and a session of their own,
// registered through the API beforehand) upload photos and voice recordings at once, the way the
// web app does (tus, tus-js-client), against the all-in-one portal with its media worker running,
// for a set time; then the bench waits for the media backlog to drain and checks that every
// upload the portal acknowledged ended `ready`.
//
// The baseline measured in the same run: the worker's own processing functions on the same files,
// one after the other in this process (bare sharp and ffmpeg, no queue, no HTTP, no storage). The
// ratio is the portal's media throughput while it drains the backlog against that.
//
//   npm run bench:festival -- [--participants 200] [--seconds 120] [--think 5] [--sample 3]
//   BENCH_ADMIN_USERNAME=... BENCH_ADMIN_PASSWORD=... npm run bench:festival -- --url https://portal.example.org [--metrics http://127.0.0.1:4002]
//
// It builds nothing: run `npm run build` first. All traffic goes to 127.0.0.1, or with --url to a
// running portal (a festival's cluster, before the festival: docs/OPERATIONS.md "The festival's
// day"), whose participants it registers under names of its own and deletes again afterwards.
import { mkdirSync, readdirSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { join, relative } from 'node:path';
import { formatProfile, summarizeProfile } from '../gateway/profile-top.mjs';
import { eachLimited, listAll, login } from '../lib/http.mjs';
import { cpuMeter, percentCell, percentile } from '../lib/measure.mjs';
import { ADMIN, ALL_IN_ONE_BUILT, mediaTools, noisyJpeg, opusRecording, registerParticipant, startAllInOne } from '../lib/portal.mjs';
import {
  RESULTS_DIR,
  ROOT,
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
  startWatchdog,
  stopChildren,
  writeResult,
} from '../lib/runner.mjs';
import { tusUpload } from '../lib/tus.mjs';

const HELP = `Usage: npm run bench:festival -- [options]   (or: node bench/festival/run.mjs [options])

Registers participants through the API, then each of them uploads, in a loop, a photo or a short
voice recording (tus, as the web app sends them) for --seconds, with the media worker running;
then waits until the media backlog has drained and checks that every acknowledged upload is ready.

Options:
  -p, --participants <n>  participants, each with their own account and session   default 200
  -s, --seconds <s>       how long they upload                                      default 120
      --think <s>         each participant's pause between two uploads              default 5
      --sample <s>        how often the media backlog is read (evidence /metrics)   default 3
      --drain <s>         the longest wait for the backlog to drain afterwards      default 900
      --photo <WxH>       the photos' size (noisy JPEG, like a phone camera's)      default 2000x1500
      --audio <s>         the recordings' length (WebM/Opus at 128 kbit/s)          default 10
      --profile           start the portal with node --cpu-prof and print the top of its profile
      --url <url>         a running portal (a cluster) instead of one started here; an administrator's
                          BENCH_ADMIN_USERNAME and BENCH_ADMIN_PASSWORD check the items and delete the
                          bench's participants afterwards. Its per-address limits must let one
                          machine through (RATE_LIMIT_PER_MINUTE=0, AUTH_RATE_LIMITS=false for the test)
      --metrics <url>     with --url: the evidence service's /metrics (kubectl port-forward
                          deploy/evidence 4002), for the media backlog; without it the backlog is
                          followed through the administrator's list of items
      --keep              with --url: keep the bench's participants and their items
      --label <text>      a note stored in the JSON result
  -h, --help              this text

The result is also written to bench/results/festival-<timestamp>.json. Build first: npm run build.`;

function settingsFromArgs() {
  const values = parseOptions(
    {
      participants: { type: 'string', short: 'p' },
      seconds: { type: 'string', short: 's' },
      think: { type: 'string' },
      sample: { type: 'string' },
      drain: { type: 'string' },
      photo: { type: 'string' },
      audio: { type: 'string' },
      profile: { type: 'boolean' },
      label: { type: 'string' },
      url: { type: 'string' },
      metrics: { type: 'string' },
      keep: { type: 'boolean' },
    },
    HELP,
  );
  const remote = values.url ? new URL(values.url).href.replace(/\/+$/, '') : null;
  if (remote && (!process.env.BENCH_ADMIN_USERNAME || !process.env.BENCH_ADMIN_PASSWORD)) {
    throw new Error('--url needs an administrator of that portal: BENCH_ADMIN_USERNAME and BENCH_ADMIN_PASSWORD');
  }
  if (values.metrics && !remote) throw new Error('--metrics goes with --url (the local portal is read directly)');
  const photo = /^(\d+)x(\d+)$/.exec(values.photo ?? '2000x1500');
  const width = int('photo width', photo?.[1], 2000, 64, 8000);
  const height = int('photo height', photo?.[2], 1500, 64, 8000);
  return {
    participants: int('participants', values.participants, 200, 1, 1000),
    seconds: int('seconds', values.seconds, 120, 5, 1800),
    think: int('think', values.think, 5, 0, 600),
    sample: int('sample', values.sample, 3, 1, 60),
    drain: int('drain', values.drain, 900, 10, 3600),
    photo: { width, height },
    audioSeconds: int('audio', values.audio, 10, 1, 120),
    profile: values.profile ?? false,
    label: values.label ?? process.env.BENCH_LABEL ?? '',
    url: remote,
    metricsUrl: values.metrics ? new URL(values.metrics).href.replace(/\/(metrics)?$/, '') : null,
    keep: values.keep ?? false,
  };
}

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * The media queues' jobs by state (every media queue added up: stills, audio/video, 720p copies and
 * the queue of earlier releases), from the evidence service's Prometheus metrics, and the
 * process's event-loop delay since the previous scrape (prom-client's default metrics: its delay
 * histogram is reset at every scrape; in the all-in-one portal that is the one process's loop).
 */
async function mediaQueue(evidenceUrl) {
  const response = await fetch(`${evidenceUrl}/metrics`, { signal: AbortSignal.timeout(10_000) });
  const text = await response.text();
  const counts = { waiting: 0, delayed: 0, active: 0, completed: 0, failed: 0 };
  let loopP99Ms = null;
  let loopMaxMs = null;
  for (const line of text.split('\n')) {
    const match = /^portal_jobs_media(?:_[a-z0-9_]+)?\{([^}]*)\}\s+(\S+)/.exec(line);
    const state = match && /state="([^"]+)"/.exec(match[1])?.[1];
    if (state) counts[state] += Number(match[2]);
    const lag = /^nodejs_eventloop_lag_(p99|max)_seconds(?:\{[^}]*\})?\s+(\S+)/.exec(line);
    if (lag?.[1] === 'p99') loopP99Ms = Number(lag[2]) * 1000;
    if (lag?.[1] === 'max') loopMaxMs = Number(lag[2]) * 1000;
  }
  return { ...counts, backlog: counts.waiting + counts.delayed + counts.active, loopP99Ms, loopMaxMs };
}

/** The worker's own processing of the same files, one after the other: the bare baseline. */
async function bareProcessing(files, rounds) {
  const { platform } = await mediaTools();
  const { transcodeAudio } = await import(join(ROOT, 'services/media-worker/dist/processing/audio.js'));
  const { stillImages } = await import(join(ROOT, 'services/media-worker/dist/processing/still-images.js'));
  const { mkdtemp, rm } = await import('node:fs/promises');
  const times = { photo: [], audio: [] };
  for (let i = 0; i < rounds; i++) {
    let start = performance.now();
    await stillImages(await readFile(files.photo));
    times.photo.push(performance.now() - start);
    const out = await mkdtemp(join(files.dir, 'bare-'));
    start = performance.now();
    // (input, probe, workDir, onProgress) in older builds, (input, workDir, onProgress) since the probe moved inside.
    if (transcodeAudio.length >= 4) await transcodeAudio(files.audio, await platform.probeMedia(files.audio), out, () => {});
    else await transcodeAudio(files.audio, out, () => {});
    times.audio.push(performance.now() - start);
    await rm(out, { recursive: true, force: true });
  }
  const mean = (list) => list.reduce((a, b) => a + b, 0) / list.length;
  // Uploads alternate photo and recording, so an item costs the mean of the two.
  const perItemMs = (mean(times.photo) + mean(times.audio)) / 2;
  return { photoMs: mean(times.photo), audioMs: mean(times.audio), itemsPerS: 1000 / perItemMs, times };
}

async function main() {
  const settings = settingsFromArgs();
  checkBuilt([...ALL_IN_ONE_BUILT, 'services/media-worker/dist/processing/still-images.js']);
  const startedAt = new Date();
  const stamp = stampOf(startedAt);
  const tempDir = makeTempDir('portal-bench-festival-');
  const stopWatchdog = startWatchdog(600 + settings.participants * 2 + settings.seconds + settings.drain + 120);
  const machine = machineInfo();
  console.log(describeMachine('festival', machine));
  console.log(
    `  ${settings.participants} participants for ${settings.seconds} s, ${settings.think} s between a participant's uploads;` +
      ` photos ${settings.photo.width}x${settings.photo.height} JPEG, recordings ${settings.audioSeconds} s Opus`,
  );

  // The files every participant sends, made once.
  const { ffmpeg } = await mediaTools();
  const files = { dir: tempDir, photo: join(tempDir, 'photo.jpg'), audio: join(tempDir, 'memo.webm') };
  const { writeFile } = await import('node:fs/promises');
  await writeFile(files.photo, await noisyJpeg(settings.photo.width, settings.photo.height));
  await opusRecording(ffmpeg, files.audio, settings.audioSeconds);
  const bodies = { photo: await readFile(files.photo), audio: await readFile(files.audio) };
  console.log(`  files: photo ${(bodies.photo.length / 1e6).toFixed(2)} MB, recording ${(bodies.audio.length / 1e6).toFixed(2)} MB`);

  process.stdout.write("  baseline: the worker's own processing of the same files, bare...");
  const bare = await bareProcessing(files, 3);
  console.log(` photo ${bare.photoMs.toFixed(0)} ms, recording ${bare.audioMs.toFixed(0)} ms: ${bare.itemsPerS.toFixed(2)} items/s`);

  // One loopback address stands for hundreds of phones (at a festival, many carrier addresses):
  // the per-address limits of the gateway and of sign-in would otherwise refuse most of them.
  const profileDir = settings.profile ? join(RESULTS_DIR, `profiles-${stamp}`) : undefined;
  if (profileDir) mkdirSync(profileDir, { recursive: true });
  // With --url, a running portal (a cluster): its metrics only through --metrics, its CPU not here.
  const portal = settings.url
    ? {
        url: settings.url,
        evidenceUrl: settings.metricsUrl,
        entry: null,
        admin: { username: process.env.BENCH_ADMIN_USERNAME, password: process.env.BENCH_ADMIN_PASSWORD },
      }
    : { ...(await startAllInOne(tempDir, { RATE_LIMIT_PER_MINUTE: '0', AUTH_RATE_LIMITS: 'false' }, { profileDir })), admin: ADMIN };
  // Names of this run's own on a portal that outlives it.
  const prefix = settings.url ? `festival_${stamp.replace(/\D/g, '').slice(-10)}` : 'festival';

  process.stdout.write(`  registering ${settings.participants} participants through the API...`);
  const registeredAt = performance.now();
  const face = await noisyJpeg(480, 480);
  const participants = await orFail(
    eachLimited(
      Array.from({ length: settings.participants }, (_, i) => i),
      4,
      (i) => registerParticipant(portal.url, `${prefix}_${i}`, face),
    ),
  );
  console.log(` ${((performance.now() - registeredAt) / 1000).toFixed(1)} s`);

  // --- the festival --------------------------------------------------------------------------
  const uploads = []; // { kind, ms, status, id, at }
  const samples = [];
  const t0 = performance.now();
  const now = () => (performance.now() - t0) / 1000;
  let sampling = true;
  const sampler = (async () => {
    while (sampling && portal.evidenceUrl) {
      try {
        const queue = await mediaQueue(portal.evidenceUrl);
        samples.push({ t: Math.round(now() * 10) / 10, acknowledged: uploads.filter((u) => u.id).length, ...queue });
      } catch (error) {
        samples.push({ t: Math.round(now() * 10) / 10, error: error.message });
      }
      await sleep(settings.sample * 1000);
    }
  })();
  const endAt = settings.seconds;
  const meter = portal.entry ? cpuMeter([portal.entry]) : null;
  console.log(`  uploading for ${settings.seconds} s...`);
  const progress = setInterval(() => {
    const last = samples.at(-1);
    console.log(
      `    ${now().toFixed(0).padStart(4)} s: ${uploads.filter((u) => u.id).length} acknowledged, ${uploads.filter((u) => !u.id).length} failed, media backlog ${last?.backlog ?? '?'}`,
    );
  }, 15_000);
  await orFail(
    Promise.all(
      participants.map(async ({ cookie }, i) => {
        // Spread the first uploads over the first think time, as people do not press at once.
        await sleep(Math.random() * settings.think * 1000);
        let kind = i % 2 === 0 ? 'photo' : 'audio';
        let n = 0;
        while (now() < endAt) {
          n += 1;
          const at = now();
          try {
            const result = await tusUpload({
              endpoint: `${portal.url}/api/evidence/uploads`,
              input: bodies[kind],
              headers: { cookie },
              metadata: {
                title: `${kind === 'photo' ? 'Photo' : 'Recording'} ${n}`,
                notes: '',
                location: '',
                filename: kind === 'photo' ? 'photo.jpg' : 'memo.webm',
                filetype: kind === 'photo' ? 'image/jpeg' : 'audio/webm',
              },
            });
            const item = JSON.parse(result.body);
            const methodMs = (method) => result.requests.filter((r) => r.method === method).reduce((sum, r) => sum + r.ms, 0);
            uploads.push({
              kind,
              at,
              ms: result.ms,
              postMs: methodMs('POST'),
              patchMs: methodMs('PATCH'),
              status: result.status,
              id: item.id,
            });
          } catch (error) {
            uploads.push({ kind, at, ms: error.ms ?? null, status: error.status ?? 0, id: null, error: error.message.slice(0, 200) });
          }
          kind = kind === 'photo' ? 'audio' : 'photo';
          if (settings.think > 0) await sleep(settings.think * 1000 * (0.5 + Math.random()));
        }
      }),
    ),
  );
  const uploadSeconds = now();
  const uploadCpu = meter?.stop() ?? { cpu: {}, otherCpu: null };
  clearInterval(progress);

  // --- the drain -----------------------------------------------------------------------------
  console.log(
    `  uploads stopped at ${uploadSeconds.toFixed(1)} s; waiting for the media backlog to drain (at most ${settings.drain} s)...`,
  );
  const acknowledged = uploads.filter((u) => u.id);
  // Without the evidence service's metrics (a cluster without --metrics), the backlog is the
  // acknowledged uploads still processing, from the administrator's list of items.
  const stillProcessing = async () => {
    const items = await listAll(portal.url, '/api/evidence/admin', await login(portal.url, portal.admin));
    const ours = new Set(acknowledged.map((u) => u.id));
    const processing = items.filter((item) => ours.has(item.id) && item.media_status === 'processing').length;
    return {
      waiting: processing,
      delayed: 0,
      active: 0,
      completed: acknowledged.length - processing,
      failed: 0,
      backlog: processing,
      loopP99Ms: null,
      loopMaxMs: null,
    };
  };
  const backlogNow = () => (portal.evidenceUrl ? mediaQueue(portal.evidenceUrl) : stillProcessing());
  const drainStart = await backlogNow();
  const drainT0 = now();
  let drained = drainStart;
  while (drained.backlog > 0 && now() - drainT0 < settings.drain) {
    await orFail(sleep(portal.evidenceUrl ? 1000 : 5000));
    drained = await backlogNow();
  }
  const drainSeconds = now() - drainT0;
  sampling = false;
  await sampler;
  samples.push({ t: Math.round(now() * 10) / 10, acknowledged: uploads.filter((u) => u.id).length, ...drained });
  const processedDuringDrain = drained.completed + drained.failed - (drainStart.completed + drainStart.failed);
  const drainItemsPerS = drainSeconds > 0 && processedDuringDrain > 0 ? processedDuringDrain / drainSeconds : null;
  stopWatchdog();

  // --- every acknowledged upload must be ready ------------------------------------------------
  // The outcome of the last jobs reaches the items through the bus: give it a few seconds.
  let states = {};
  for (let attempt = 0; attempt < 20; attempt++) {
    const adminCookie = await login(portal.url, portal.admin);
    const items = await listAll(portal.url, '/api/evidence/admin', adminCookie);
    const byId = new Map(items.map((item) => [item.id, item.media_status]));
    states = {};
    for (const upload of acknowledged) {
      const state = byId.get(upload.id) ?? 'missing';
      states[state] = (states[state] ?? 0) + 1;
    }
    if ((states.processing ?? 0) === 0 || drained.backlog > 0) break;
    await sleep(1000);
  }
  const allReady = acknowledged.length > 0 && (states.ready ?? 0) === acknowledged.length;
  await stopChildren();
  if (settings.url && !settings.keep) {
    // The bench's participants and everything of theirs go, as an administrator deletes a person.
    process.stdout.write(`  deleting the ${participants.length} bench participants and their items...`);
    const adminCookie = await login(portal.url, portal.admin);
    await orFail(
      eachLimited(participants, 4, async ({ id, username }) => {
        const response = await fetch(`${portal.url}/api/user/${id}`, {
          method: 'DELETE',
          headers: { cookie: adminCookie },
          signal: AbortSignal.timeout(60_000),
        });
        if (response.status !== 200 && response.status !== 204)
          throw new Error(`deleting ${username} answered ${response.status}: ${await response.text()}`);
      }),
    );
    console.log(' done');
  }

  // --- the report ----------------------------------------------------------------------------
  const latencies = acknowledged.map((u) => u.ms);
  const errorsByStatus = {};
  for (const u of uploads.filter((x) => !x.id)) errorsByStatus[u.status] = (errorsByStatus[u.status] ?? 0) + 1;
  const byKind = Object.fromEntries(
    ['photo', 'audio'].map((kind) => {
      const list = acknowledged.filter((u) => u.kind === kind).map((u) => u.ms);
      return [kind, { acknowledged: list.length, p50Ms: percentile(list, 50), p99Ms: percentile(list, 99) }];
    }),
  );
  const peak = samples.reduce((max, s) => Math.max(max, s.backlog ?? 0), 0);
  const ratio = drainItemsPerS === null ? null : drainItemsPerS / bare.itemsPerS;

  console.log("\n  media backlog over time (waiting + active jobs; sampled from the evidence service's /metrics):");
  printTable(
    ['t s', 'acknowledged', 'backlog', 'waiting', 'active', 'completed', 'failed', 'loop delay p99/max ms'],
    samples
      .filter((s) => !s.error)
      .map((s) => [
        s.t.toFixed(0),
        s.acknowledged,
        s.backlog,
        s.waiting,
        s.active,
        s.completed,
        s.failed,
        s.loopP99Ms === null ? '-' : `${s.loopP99Ms.toFixed(0)}/${s.loopMaxMs.toFixed(0)}`,
      ]),
  );
  printTable(
    [
      'uploads',
      'acknowledged',
      'uploads/s',
      'errors',
      'p50 ms',
      'p99 ms',
      'photo p50/p99 ms',
      'audio p50/p99 ms',
      'CPU portal',
      'CPU bench',
      'CPU other',
    ],
    [
      [
        uploads.length,
        acknowledged.length,
        (acknowledged.length / uploadSeconds).toFixed(2),
        uploads.length - acknowledged.length,
        percentile(latencies, 50)?.toFixed(0) ?? '-',
        percentile(latencies, 99)?.toFixed(0) ?? '-',
        `${byKind.photo.p50Ms?.toFixed(0) ?? '-'}/${byKind.photo.p99Ms?.toFixed(0) ?? '-'}`,
        `${byKind.audio.p50Ms?.toFixed(0) ?? '-'}/${byKind.audio.p99Ms?.toFixed(0) ?? '-'}`,
        percentCell(uploadCpu.cpu.portal),
        percentCell(uploadCpu.cpu.bench),
        percentCell(uploadCpu.otherCpu),
      ],
    ],
  );
  const phase = (key) => acknowledged.map((u) => u[key]).filter((ms) => ms !== undefined);
  const p5099 = (list) => `${percentile(list, 50)?.toFixed(0) ?? '-'} / ${percentile(list, 99)?.toFixed(0) ?? '-'} ms`;
  console.log(
    `  upload latency by request, p50 / p99: creation (POST) ${p5099(phase('postMs'))}, bytes and filing (PATCH) ${p5099(phase('patchMs'))}`,
  );
  const loops = samples.filter((s) => typeof s.loopMaxMs === 'number' && s.t <= uploadSeconds);
  if (loops.length) {
    console.log(
      `  the portal's event-loop delay while uploading: p99 per ${settings.sample} s sample, median ${percentile(
        loops.map((s) => s.loopP99Ms),
        50,
      ).toFixed(0)} ms; worst max ${Math.max(...loops.map((s) => s.loopMaxMs)).toFixed(0)} ms`,
    );
  }
  console.log(`  errors by status: ${Object.keys(errorsByStatus).length ? JSON.stringify(errorsByStatus) : 'none'}   (0 = no answer)`);
  console.log(
    `  media backlog: peak ${peak}, ${drainStart.backlog} when the uploads stopped, drained in ${drainSeconds.toFixed(0)} s${drained.backlog > 0 ? ` (NOT drained: ${drained.backlog} left)` : ''}`,
  );
  console.log(
    `  media throughput while draining: ${drainItemsPerS?.toFixed(2) ?? '-'} items/s; bare processing of the same files: ${bare.itemsPerS.toFixed(2)} items/s;` +
      ` portal / bare = ${ratio?.toFixed(2) ?? '-'}`,
  );
  console.log(
    `  acknowledged uploads by media state: ${JSON.stringify(states)}   ${allReady ? 'every acknowledged upload is ready' : 'NOT every acknowledged upload is ready'}`,
  );
  if (!allReady) process.exitCode = 1;

  if (profileDir) {
    for (const file of readdirSync(profileDir).filter((f) => f.endsWith('.cpuprofile'))) {
      const path = join(profileDir, file);
      console.log(`\nCPU profile ${relative(ROOT, path)} (whole process life, sign-ups and drain included):`);
      console.log(formatProfile(summarizeProfile(path), 25));
    }
  }

  writeResult('festival', stamp, {
    bench: 'festival',
    label: settings.label,
    startedAt: startedAt.toISOString(),
    machine,
    commit: gitDescribe(),
    settings,
    files: { photoBytes: bodies.photo.length, audioBytes: bodies.audio.length },
    uploads: {
      attempted: uploads.length,
      acknowledged: acknowledged.length,
      seconds: uploadSeconds,
      perSecond: acknowledged.length / uploadSeconds,
      errorsByStatus,
      latencyMs: {
        p50: percentile(latencies, 50),
        p90: percentile(latencies, 90),
        p99: percentile(latencies, 99),
        max: percentile(latencies, 100),
      },
      byKind,
      cpu: uploadCpu,
      errors: uploads.filter((u) => !u.id).slice(0, 20),
    },
    media: {
      peakBacklog: peak,
      backlogAtStop: drainStart.backlog,
      drainSeconds,
      drained: drained.backlog === 0,
      drainItemsPerS,
      bare,
      ratio,
    },
    acknowledgedByState: states,
    allReady,
    samples,
  });
}

await runBench('festival', main);
