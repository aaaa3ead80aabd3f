#!/usr/bin/env node
// The archive bench: a page of the public archive (GET /api/evidence/public?limit=24, what the
// archive screen asks first) through the all-in-one portal, against a bare node:http server that
// answers the same bytes and headers, in one run, with the same load. The headline is the ratio.
//
//   npm run bench:archive -- [--notes 240] [--photos 60] [--connections 20] [--duration 10]
//                            [--warmup 3] [--rounds 1] [--profile] [--label text]
//
// It builds nothing: run `npm run build` first. All traffic goes to 127.0.0.1.
import { request } from 'node:http';
import { mkdirSync, readdirSync, writeFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { formatProfile, summarizeProfile } from '../gateway/profile-top.mjs';
import { eachLimited, expectStatus, freePort, listAll, login, waitFor } from '../lib/http.mjs';
import { CANNON_HEADER, averageRuns, cannonCells, cannonWarnings, measureRounds } from '../lib/measure.mjs';
import { ADMIN, ALL_IN_ONE_BUILT, noisyJpeg, registerParticipant, startAllInOne } from '../lib/portal.mjs';
import {
  HOST,
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
  startChild,
  startWatchdog,
  stopChildren,
  writeResult,
} from '../lib/runner.mjs';

const PAGE_PATH = '/api/evidence/public?limit=24';
// Issue 14: a page from memory should cost what sending its bytes costs (it was 0.4 before the cache went in front of fastify).
const GOAL = 0.9;

const HELP = `Usage: npm run bench:archive -- [options]   (or: node bench/archive/run.mjs [options])

Seeds the all-in-one portal through its API with public, ready items (notes and small photos from
a few participants), then measures ${PAGE_PATH} through the portal against a bare node:http
server answering the same bytes and headers.

Options (environment variable in brackets):
      --notes <n>         notes to seed                               default 240
      --photos <n>        photos to seed (800x600 JPEG, processed by the media worker) default 60
  -c, --connections <n>   concurrent connections per measurement   [BENCH_CONNECTIONS]  default 20
  -d, --duration <s>      seconds measured per target and round     [BENCH_DURATION]     default 10
  -w, --warmup <s>        seconds of unmeasured load per target first [BENCH_WARMUP]    default 3
  -r, --rounds <n>        rounds (targets alternate order each round) [BENCH_ROUNDS]     default 1
      --profile           start the portal with node --cpu-prof and print the top of its profile
      --label <text>      a note stored in the JSON result
  -h, --help              this text

The result is also written to bench/results/archive-<timestamp>.json. Build first: npm run build.`;

function settingsFromArgs() {
  const values = parseOptions(
    {
      notes: { type: 'string' },
      photos: { type: 'string' },
      connections: { type: 'string', short: 'c' },
      duration: { type: 'string', short: 'd' },
      warmup: { type: 'string', short: 'w' },
      rounds: { type: 'string', short: 'r' },
      profile: { type: 'boolean' },
      label: { type: 'string' },
    },
    HELP,
  );
  const env = process.env;
  return {
    notes: int('notes', values.notes, 240, 0, 5000),
    photos: int('photos', values.photos, 60, 0, 1000),
    connections: int('connections', values.connections ?? env.BENCH_CONNECTIONS, 20, 1, 1000),
    duration: int('duration', values.duration ?? env.BENCH_DURATION, 10, 1, 300),
    warmup: int('warmup', values.warmup ?? env.BENCH_WARMUP, 3, 0, 60),
    rounds: int('rounds', values.rounds ?? env.BENCH_ROUNDS, 1, 1, 10),
    profile: values.profile ?? false,
    label: values.label ?? env.BENCH_LABEL ?? '',
  };
}

/** The raw answer of one GET (status, headers in order and case, body bytes). */
function recordAnswer(url) {
  return new Promise((resolve, reject) => {
    const req = request(url, { method: 'GET' }, (res) => {
      const chunks = [];
      res.on('data', (chunk) => chunks.push(chunk));
      res.on('end', () => resolve({ status: res.statusCode, rawHeaders: res.rawHeaders, body: Buffer.concat(chunks) }));
      res.on('error', reject);
    });
    req.on('error', reject);
    req.setTimeout(30_000, () => req.destroy(new Error(`GET ${url} timed out`)));
    req.end();
  });
}

/** Notes and photos from a few participants, all made public by the administrator, all ready. */
async function seed(url, settings) {
  const adminCookie = await login(url, ADMIN);
  const face = await noisyJpeg(320, 320);
  const participants = await eachLimited(['alpha', 'bravo', 'charlie', 'delta'], 2, (tag) =>
    registerParticipant(url, `archive_${tag}`, face),
  );
  const photo = await noisyJpeg(800, 600);
  const work = [
    ...Array.from({ length: settings.notes }, (_, i) => ({ kind: 'note', i })),
    ...Array.from({ length: settings.photos }, (_, i) => ({ kind: 'photo', i })),
  ];
  await eachLimited(work, 6, async ({ kind, i }) => {
    const { cookie } = participants[i % participants.length];
    const title = `${kind === 'note' ? 'Sighting' : 'Photo'} ${i + 1}`;
    const notes =
      `Seen near the corner at ${String(8 + (i % 12)).padStart(2, '0')}:${String(i % 60).padStart(2, '0')}. A person in a grey coat handed over an envelope and walked off towards the library. `.repeat(
        1 + (i % 3),
      );
    if (kind === 'note') {
      await expectStatus(
        `${url}/api/evidence`,
        {
          method: 'POST',
          headers: { cookie, 'content-type': 'application/json' },
          body: JSON.stringify({ title, notes, location: 'Main Street' }),
        },
        201,
        'a note',
      );
    } else {
      const form = new FormData();
      form.append('title', title);
      form.append('notes', notes);
      form.append('file', new Blob([photo], { type: 'image/jpeg' }), `photo-${i}.jpg`);
      await expectStatus(`${url}/api/evidence`, { method: 'POST', headers: { cookie }, body: form }, 201, 'a photo');
    }
  });
  await expectStatus(`${url}/api/evidence/makeAllPublic`, { method: 'PUT', headers: { cookie: adminCookie } }, 200, 'make all public');
  // Public means public and ready: wait for the media worker to finish the photos.
  const total = settings.notes + settings.photos;
  const deadline = Date.now() + 300_000;
  for (;;) {
    const listed = (await listAll(url, '/api/evidence/public')).length;
    if (listed === total) return total;
    if (Date.now() > deadline) throw new Error(`only ${listed} of ${total} items are public and ready after 300 s`);
    await new Promise((resolve) => setTimeout(resolve, 1000));
  }
}

async function main() {
  const settings = settingsFromArgs();
  checkBuilt(ALL_IN_ONE_BUILT);
  const startedAt = new Date();
  const stamp = stampOf(startedAt);
  const tempDir = makeTempDir('portal-bench-archive-');
  const profileDir = settings.profile ? join(RESULTS_DIR, `profiles-${stamp}`) : undefined;
  if (profileDir) mkdirSync(profileDir, { recursive: true });
  const stopWatchdog = startWatchdog(420 + 2 * settings.rounds * (settings.duration + 2) + 2 * (settings.warmup + 2));

  const machine = machineInfo();
  console.log(describeMachine('archive', machine));
  console.log(
    `  ${settings.notes} notes + ${settings.photos} photos seeded; ${settings.connections} connections, ${settings.warmup} s warm-up + ${settings.duration} s measured per target, ${settings.rounds} round(s)`,
  );

  // One loopback address stands for many visitors: the per-address API limit would answer 429s.
  const portal = await startAllInOne(tempDir, { RATE_LIMIT_PER_MINUTE: '0' }, { profileDir });
  process.stdout.write('  seeding through the API...');
  const seededAt = Date.now();
  const total = await orFail(seed(portal.url, settings));
  console.log(` ${total} public items in ${((Date.now() - seededAt) / 1000).toFixed(1)} s`);

  // The bare server answers what the portal answered, byte for byte.
  const answer = await recordAnswer(`${portal.url}${PAGE_PATH}`);
  if (answer.status !== 200) throw new Error(`${PAGE_PATH} answered ${answer.status}: ${answer.body.toString('utf8')}`);
  const page = JSON.parse(answer.body.toString('utf8'));
  const answerFile = join(tempDir, 'answer.json');
  writeFileSync(answerFile, JSON.stringify({ status: answer.status, rawHeaders: answer.rawHeaders, body: answer.body.toString('base64') }));
  const barePort = await freePort();
  const bare = startChild('bare', 'bench/archive/bare-server.mjs', { PORT: String(barePort), HOST, ANSWER_FILE: answerFile });
  const bareUrl = `http://${HOST}:${barePort}`;
  await orFail(waitFor(`${bareUrl}${PAGE_PATH}`, 'bare server'));
  const replayed = await recordAnswer(`${bareUrl}${PAGE_PATH}`);
  const names = (raw) =>
    raw
      .filter((_, i) => i % 2 === 0)
      .map((n) => n.toLowerCase())
      .filter((n) => !['date', 'connection', 'keep-alive'].includes(n));
  if (!replayed.body.equals(answer.body) || names(replayed.rawHeaders).join() !== names(answer.rawHeaders).join()) {
    throw new Error('the bare server does not answer what the portal answered');
  }
  const headerBytes = answer.rawHeaders.reduce((sum, part) => sum + part.length, 0) + answer.rawHeaders.length;
  console.log(
    `  the page: ${page.length} items, ${answer.body.length} bytes of JSON, ${answer.rawHeaders.length / 2} headers (${headerBytes} bytes)`,
  );

  const targets = [
    { key: 'bare', title: 'bare node:http, same bytes', url: `${bareUrl}${PAGE_PATH}` },
    { key: 'portal', title: 'through the portal', url: `${portal.url}${PAGE_PATH}` },
  ];
  const processes = [portal.entry, bare];
  const runs = await measureRounds(targets, settings, processes);
  stopWatchdog();
  const results = Object.fromEntries(
    targets.map((t) => [t.key, { title: t.title, url: t.url, ...averageRuns(runs[t.key]), rounds: runs[t.key] }]),
  );
  const ratio = results.portal.rps / results.bare.rps;

  await stopChildren();

  const cpuNames = Object.keys(results.bare.cpu);
  printTable(
    ['target', ...CANNON_HEADER, ...cpuNames.map((n) => `CPU ${n}`), 'CPU other'],
    targets.map((t) => [t.title, ...cannonCells(results[t.key], cpuNames)]),
  );
  console.log(`  portal / bare = ${ratio.toFixed(2)}   (goal: >= ${GOAL}; a ratio within this run, not an absolute figure)`);
  console.log(`  p99: portal ${results.portal.latency.p99.toFixed(1)} ms, bare ${results.bare.latency.p99.toFixed(1)} ms`);
  const us = (key, name) => Math.round(results[key].cpuPerRequestUs[name] ?? 0);
  console.log(
    `  CPU per request: portal ${us('portal', 'portal')} µs, bare server ${us('bare', 'bare')} µs, load generator ${us('portal', 'bench')} µs (portal) / ${us('bare', 'bench')} µs (bare)`,
  );
  cannonWarnings(targets, results);

  let profiles;
  if (profileDir) {
    profiles = {};
    for (const file of readdirSync(profileDir).filter((f) => f.endsWith('.cpuprofile'))) {
      const path = join(profileDir, file);
      profiles[file] = relative(ROOT, path);
      console.log(`\nCPU profile ${relative(ROOT, path)} (whole process life, seeding included):`);
      console.log(formatProfile(summarizeProfile(path), 20));
    }
  }

  writeResult('archive', stamp, {
    bench: 'archive',
    label: settings.label,
    startedAt: startedAt.toISOString(),
    machine,
    commit: gitDescribe(),
    settings,
    path: PAGE_PATH,
    seeded: { notes: settings.notes, photos: settings.photos },
    answer: { items: page.length, bodyBytes: answer.body.length, headers: answer.rawHeaders.length / 2, headerBytes },
    ratio,
    goal: GOAL,
    results,
    ...(profiles ? { profiles } : {}),
  });
}

await runBench('archive', main);
