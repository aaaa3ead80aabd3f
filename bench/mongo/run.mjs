#!/usr/bin/env node
// bench/mongo: what the MongoDB adapters' per-collection write queue (serialWrite) costs. One
// process updates evidence items through the real repository (MongoEvidenceRepository from
// services/evidence/dist: each update is one findOneAndUpdate that changes the item and appends its
// event to the item's outbox, the shape of every change a service makes), --concurrency updates in
// flight at once on --items items, for --seconds per round; rounds alternate the queue on and off
// (MONGO_SERIAL_WRITES=on|off), each on fresh items. Per server given (FerretDB, mongo-java-server,
// MongoDB...): updates per second, latency, the most update commands the server had in flight at
// once, and lost updates (acknowledged updates whose event is missing from the item's outbox).
// Each server on loopback and, through bench/mongo/delay-proxy.mjs, at a network distance
// (--rtt: milliseconds added to each round trip), since what the queue costs is round trips.
//
//   set -a; . infra/local/.env.servers; set +a; npm run build && npm run bench:mongo
//   npm run bench:mongo -- --mongo mongodb://127.0.0.1:27027,mongodb://127.0.0.1:27127 --rtt 0,2
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { delayedMongoUrl } from '../lib/delayed-mongo.mjs';
import { median, percentile } from '../lib/measure.mjs';
import {
  ROOT,
  UsageError,
  makeTempDir,
  checkBuilt,
  gitDescribe,
  intOption as int,
  machineInfo,
  describeMachine,
  orFail,
  parseOptions,
  printTable,
  runBench,
  startWatchdog,
  stampOf,
  writeResult,
} from '../lib/runner.mjs';

const BUILT = [
  'packages/platform/dist/index.js',
  'services/evidence/dist/repositories/mongo/mongo-evidence-repository.js',
  'services/evidence/dist/domain/evidence-record.js',
];

const HELP = `Usage: npm run bench:mongo -- [options]   (or: node bench/mongo/run.mjs [options])

Updates evidence items through the MongoDB evidence repository with the write queue on and off,
rounds interleaved, on each server given, and prints updates/s, latency, the most updates in
flight at once and lost updates per mode, and off/on as the headline.

Options:
      --mongo <urls>        mongodb:// URLs, comma-separated (default: MONGO_URLS, else MONGO_URL)
      --concurrency <n>     updates in flight at once in the process (default 32; 1 to 500)
      --items <n>           items they update, picked at random (default 16; 1 to 10000)
      --seconds <n>         length of each round (default 2; 1 to 60)
      --rounds <n>          rounds per mode (default 3; 1 to 20)
      --rtt <ms,...>        milliseconds added to each round trip by a delaying proxy, one
                            measurement per value (default 0,2: loopback, and a server 2 ms away)
      --label <text>        a note stored in the JSON result
  -h, --help                this text

The local servers: infra/local/servers.sh start (FerretDB; MONGO_IMPL=mongo-java-server for the
other one), then load infra/local/.env.servers. Each server gets a database of its own,
bench_mongo_<timestamp>, dropped at the end. The result is also written to
bench/results/mongo-<timestamp>.json. Build first: npm run build.`;

const load = (file) => import(pathToFileURL(join(ROOT, file)).href);

async function main() {
  const values = parseOptions(
    {
      mongo: { type: 'string' },
      concurrency: { type: 'string' },
      items: { type: 'string' },
      seconds: { type: 'string' },
      rounds: { type: 'string' },
      rtt: { type: 'string' },
      label: { type: 'string' },
    },
    HELP,
  );
  const urls = (values.mongo ?? process.env.MONGO_URLS ?? process.env.MONGO_URL ?? '')
    .split(',')
    .map((url) => url.trim())
    .filter(Boolean);
  if (urls.length === 0)
    throw new UsageError(
      'No MongoDB server: pass --mongo <url>, or load infra/local/.env.servers (set -a; . infra/local/.env.servers; set +a).',
    );
  for (const url of urls) if (!/^mongodb(\+srv)?:\/\//.test(url)) throw new UsageError(`--mongo: not a mongodb:// URL: ${url}`);
  const concurrency = int('concurrency', values.concurrency, 32, 1, 500);
  const itemCount = int('items', values.items, 16, 1, 10_000);
  const seconds = int('seconds', values.seconds, 2, 1, 60);
  const rounds = int('rounds', values.rounds, 3, 1, 20);
  const rtts = (values.rtt ?? '0,2').split(',').map((raw) => int('rtt', raw.trim(), 0, 0, 100));
  if (rtts.some((rtt) => rtt > 0)) {
    for (const url of urls)
      if (url.startsWith('mongodb+srv:'))
        throw new UsageError(`--rtt: a mongodb+srv:// URL cannot go through the delaying proxy (${url}); use --rtt 0`);
  }
  checkBuilt(BUILT);
  const { connectMongo, createEvent, serialWritesOf } = await load('packages/platform/dist/index.js');
  const { MongoEvidenceRepository } = await load('services/evidence/dist/repositories/mongo/mongo-evidence-repository.js');
  const { NO_MEDIA } = await load('services/evidence/dist/domain/evidence-record.js');

  const startedAt = new Date();
  const stamp = stampOf(startedAt);
  const machine = machineInfo();
  makeTempDir('portal-bench-mongo-');
  // Per server and distance: a round per mode per round, each with its items' set-up, plus connecting.
  const stopWatchdog = startWatchdog(60 + urls.length * rtts.length * rounds * 2 * (seconds + 30));
  console.log(describeMachine('mongo', machine));
  console.log(
    `  ${concurrency} updates in flight on ${itemCount} items, ${rounds} rounds of ${seconds} s per mode, on ${urls.length} server(s), + ${rtts.join(' / ')} ms per round trip`,
  );

  const servers = [];
  const context = {
    connectMongo,
    createEvent,
    serialWritesOf,
    MongoEvidenceRepository,
    NO_MEDIA,
    concurrency,
    itemCount,
    seconds,
    rounds,
    stamp,
  };
  for (const [index, direct] of urls.entries()) {
    for (const rtt of rtts) {
      const url = rtt === 0 ? direct : await delayedMongoUrl(direct, rtt, `proxy-${index}-${rtt}ms`);
      servers.push(await measureServer(direct, url, rtt, context));
    }
  }
  stopWatchdog();

  printTable(
    ['server', '+ rtt', 'queue', 'updates/s', 'p50 ms', 'p95 ms', 'in flight', 'lost', 'off / on'],
    servers.flatMap((entry) =>
      ['on', 'off'].map((mode) => [
        mode === 'on' ? `${entry.server}${entry.autoQueues ? ' (auto: on)' : ' (auto: off)'}` : '',
        mode === 'on' ? `${entry.rttMs} ms` : '',
        mode,
        entry[mode].updatesPerSecond.toFixed(0),
        entry[mode].p50Ms.toFixed(1),
        entry[mode].p95Ms.toFixed(1),
        entry[mode].mostInFlight,
        `${entry[mode].lost} of ${entry[mode].acknowledged}`,
        mode === 'off' ? entry.offOverOn.toFixed(2) : '',
      ]),
    ),
  );
  for (const entry of servers) {
    const verdict =
      entry.off.lost > 0
        ? `without the queue it lost ${entry.off.lost} of ${entry.off.acknowledged} acknowledged updates: it needs the queue`
        : 'nothing lost without the queue';
    console.log(`${entry.server} + ${entry.rttMs} ms: off / on ${entry.offOverOn.toFixed(2)}; ${verdict}.`);
  }
  console.log(`machine load average at start ${machine.loadAverageAtStart.join(' ')}`);
  writeResult('mongo', stamp, {
    bench: 'mongo',
    startedAt: startedAt.toISOString(),
    commit: gitDescribe(),
    label: values.label ?? process.env.BENCH_LABEL ?? '',
    machine,
    settings: { concurrency, items: itemCount, seconds, rounds, rttMs: rtts },
    servers,
  });
}

/**
 * One server at one distance: connections with the queue on, off and auto (what auto decides and
 * how the server names itself), then the rounds, interleaved, in a database of their own.
 */
async function measureServer(direct, url, rtt, context) {
  const { connectMongo, createEvent, serialWritesOf, MongoEvidenceRepository, NO_MEDIA, concurrency, itemCount, seconds, rounds, stamp } =
    context;
  const database = `bench_mongo_${stamp.replace(/-/g, '').slice(0, 15)}_${rtt}ms`;
  // One connection per mode to the same database; the driver's command events count what is in flight.
  const open = async (serialWrites) => {
    const connection = await orFail(connectMongo(url, database, { serialWrites, driver: { monitorCommands: true } }));
    const repository = new MongoEvidenceRepository(connection);
    const gauge = inFlightGauge(connection.getClient());
    return { connection, repository, gauge };
  };
  const modes = { on: await open('on'), off: await open('off') };
  const auto = await open('auto');
  const decision = serialWritesOf(auto.connection);
  const buildInfo = await auto.connection.db.admin().command({ buildInfo: 1 });
  const server = buildInfo.ferretdbVersion
    ? `FerretDB ${buildInfo.ferretdbVersion}`
    : buildInfo.gitVersion
      ? `MongoDB ${buildInfo.version}`
      : `MongoDB-wire server ${buildInfo.version} (no gitVersion)`;
  await auto.connection.close();
  await modes.on.repository.ensureIndexes();
  console.log(
    `\n${direct}${rtt ? ` + ${rtt} ms per round trip` : ''}: ${server}; auto would queue: ${decision.on ? 'yes' : 'no'} (${decision.reason})`,
  );

  const runs = { on: [], off: [] };
  try {
    for (let round = 0; round < rounds; round += 1) {
      for (const mode of round % 2 === 0 ? ['on', 'off'] : ['off', 'on']) {
        const figures = await orFail(updateRound(modes[mode], { round, mode, concurrency, itemCount, seconds, createEvent, NO_MEDIA }));
        runs[mode].push(figures);
        console.log(
          `  round ${round + 1} queue ${mode.padEnd(3)}: ${figures.updatesPerSecond.toFixed(0).padStart(6)} updates/s, p50 ${figures.p50Ms.toFixed(1)} ms, p95 ${figures.p95Ms.toFixed(1)} ms, ` +
            `most in flight ${figures.mostInFlight}, lost ${figures.lost} of ${figures.acknowledged}`,
        );
      }
    }
  } finally {
    await modes.on.connection.db.dropDatabase().catch(() => undefined);
    for (const { connection } of Object.values(modes)) await connection.close();
  }
  const summary = (list) => ({
    updatesPerSecond: median(list.map((run) => run.updatesPerSecond)),
    p50Ms: median(list.map((run) => run.p50Ms)),
    p95Ms: median(list.map((run) => run.p95Ms)),
    mostInFlight: Math.max(...list.map((run) => run.mostInFlight)),
    lost: list.reduce((sum, run) => sum + run.lost, 0),
    acknowledged: list.reduce((sum, run) => sum + run.acknowledged, 0),
  });
  const on = summary(runs.on);
  const off = summary(runs.off);
  return {
    url: direct,
    rttMs: rtt,
    server,
    autoQueues: decision.on,
    autoReason: decision.reason,
    on,
    off,
    offOverOn: off.updatesPerSecond / on.updatesPerSecond,
    runs,
  };
}

/** The most `update`/`findAndModify` commands on `evidence` in flight at once, from the driver's command events. */
function inFlightGauge(client) {
  const inFlight = new Set();
  let most = 0;
  client.on('commandStarted', (started) => {
    const command = started.commandName;
    if ((command === 'update' || command === 'findAndModify') && started.command[command] === 'evidence') {
      inFlight.add(started.requestId);
      most = Math.max(most, inFlight.size);
    }
  });
  const done = (event) => inFlight.delete(event.requestId);
  client.on('commandSucceeded', done);
  client.on('commandFailed', done);
  return {
    reset: () => {
      most = inFlight.size;
    },
    most: () => most,
  };
}

/**
 * One round: fresh items, then `concurrency` loops each updating a random item (a change and its
 * event) until the time is up. Lost: acknowledged updates of an item beyond the events its
 * outbox holds (nothing publishes them during the bench).
 */
async function updateRound({ repository, connection, gauge }, { round, mode, concurrency, itemCount, seconds, createEvent, NO_MEDIA }) {
  const now = new Date().toISOString();
  const items = Array.from({ length: itemCount }, (_, i) => ({
    id: `r${round}-${mode}-${i}-${Math.random().toString(36).slice(2, 10)}`,
    user_id: `bench-owner-${i % 4}`,
    username: 'bench',
    avatar_url: null,
    title: 'Lantern by the harbour',
    notes: 'Seen from the quay',
    location: null,
    media_type: 2,
    is_public: false,
    review_status: 'new',
    date_posted: now,
    updated_at: now,
    media_status: 'none',
    media_error: null,
    media_revision: 0,
    ...NO_MEDIA,
  }));
  for (const item of items) await repository.create(item, []);
  const acknowledged = new Map(items.map((item) => [item.id, 0]));
  const latencies = [];
  gauge.reset();
  const started = performance.now();
  const endAt = started + seconds * 1000;
  const worker = async (w) => {
    for (let n = 0; performance.now() < endAt; n += 1) {
      const item = items[Math.floor(Math.random() * items.length)];
      const event = {
        topic: 'evidence.items',
        event: createEvent({ type: 'evidence.updated', key: item.id, data: { evidenceId: item.id } }),
      };
      const t = performance.now();
      const updated = await repository.update(item.id, { location: `worker ${w} update ${n}`, updated_at: new Date().toISOString() }, [
        event,
      ]);
      latencies.push(performance.now() - t);
      if (updated) acknowledged.set(item.id, acknowledged.get(item.id) + 1);
    }
  };
  await Promise.all(Array.from({ length: concurrency }, (_, w) => worker(w)));
  const elapsed = (performance.now() - started) / 1000;
  const mostInFlight = gauge.most();
  const documents = await connection
    .collection('evidence')
    .find({ _id: { $in: items.map((item) => item.id) } }, { projection: { _outbox: 1 } })
    .toArray();
  const held = new Map(documents.map((document) => [document._id, document._outbox.length]));
  let lost = 0;
  let total = 0;
  for (const [id, count] of acknowledged) {
    total += count;
    lost += Math.max(0, count - (held.get(id) ?? 0));
  }
  return {
    updatesPerSecond: latencies.length / elapsed,
    p50Ms: percentile(latencies, 50),
    p95Ms: percentile(latencies, 95),
    mostInFlight,
    acknowledged: total,
    lost,
  };
}

await runBench('mongo', main);
