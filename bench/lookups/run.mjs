#!/usr/bin/env node
// bench/lookups: what a day's call sheet (and an announcement's count) costs in account lookups.
// Each row of the call sheet names the account under its address; the identity service used to
// ask the user repository once per row (findByEmail for each, all at once), and now asks once per
// 500 (SQLite) or 1,000 (MongoDB) addresses (findByEmails). Both methods are still there, so both
// are measured in the same run on the same accounts: per store (the all-in-one SQLite file, each
// MongoDB-wire server given, at a network distance too), rounds interleaved, the median of each.
//
//   npm run build && npm run bench:lookups
//   set -a; . infra/local/.env.servers; set +a; npm run bench:lookups -- --mongo "$MONGO_URL" --rtt 0,2
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { delayedMongoUrl } from '../lib/delayed-mongo.mjs';
import { median } from '../lib/measure.mjs';
import {
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
  startWatchdog,
  writeResult,
} from '../lib/runner.mjs';

const BUILT = [
  'packages/platform/dist/index.js',
  'services/identity/dist/repositories/sqlite/sqlite-user-repository.js',
  'services/identity/dist/repositories/sqlite/migrations.js',
  'services/identity/dist/repositories/mongo/mongo-user-repository.js',
];

const HELP = `Usage: npm run bench:lookups -- [options]   (or: node bench/lookups/run.mjs [options])

Looks up the accounts of a day's appointments through the identity service's user repository,
one query per address (what the call sheet did) against findByEmails (what it does), on SQLite
and on each MongoDB-wire server given; prints the median time of each and the ratio.

Options:
      --rows <n>        appointments on the day (addresses looked up)          default 2000
      --accounts <n>    how many of them have an account (the others: none)    default 1000
      --rounds <n>      rounds per way, interleaved                            default 5
      --mongo <urls>    mongodb:// URLs, comma-separated (default: MONGO_URL when set; none: SQLite only)
      --rtt <ms,...>    milliseconds added to each round trip to MongoDB by a delaying proxy
                        (bench/mongo/delay-proxy.mjs), one measurement per value     default 0,2
      --label <text>    a note stored in the JSON result
  -h, --help            this text

The result is also written to bench/results/lookups-<timestamp>.json. Build first: npm run build.`;

const load = (file) => import(pathToFileURL(join(ROOT, file)).href);

/** An account as the identity service stores it: confirmed, a mobile number, texts on. */
function account(index, tag) {
  const now = new Date().toISOString();
  return {
    id: `bench-${tag}-${index}`,
    username: `bench_${tag}_${index}`,
    full_name: `Ticket Holder ${index}`,
    email: `holder${index}_${tag}@example.org`,
    phone_number: `20255${String(50000 + index).slice(-5)}`,
    pronouns: '',
    role: 1,
    password_hash: '$argon2id$bench',
    verification_photo_key: null,
    avatar_key: null,
    video_watched: true,
    email_verified: true,
    sms_reminders: true,
    terms_version: '2026-07',
    terms_accepted_at: now,
    created_at: now,
    updated_at: now,
  };
}

/** The two ways, interleaved: their medians in ms, and that both found the same accounts. */
async function measure(users, addresses, rounds) {
  const ways = {
    perAddress: async () => (await Promise.all(addresses.map((email) => users.findByEmail(email)))).filter(Boolean).length,
    batched: async () => (await users.findByEmails(addresses)).length,
  };
  const times = { perAddress: [], batched: [] };
  const found = { perAddress: new Set(), batched: new Set() };
  // One warm-up each (statements prepared, connections open), then the rounds.
  for (const way of Object.keys(ways)) await ways[way]();
  for (let round = 0; round < rounds; round++) {
    for (const way of round % 2 === 0 ? ['perAddress', 'batched'] : ['batched', 'perAddress']) {
      const started = performance.now();
      found[way].add(await ways[way]());
      times[way].push(performance.now() - started);
    }
    console.log(
      `    round ${round + 1}: one query per address ${times.perAddress.at(-1).toFixed(1)} ms, findByEmails ${times.batched.at(-1).toFixed(1)} ms`,
    );
  }
  if (found.perAddress.size !== 1 || found.batched.size !== 1 || [...found.perAddress][0] !== [...found.batched][0])
    throw new Error(`the two ways found different accounts: ${[...found.perAddress]} against ${[...found.batched]}`);
  const perAddress = median(times.perAddress);
  const batched = median(times.batched);
  return { accountsFound: [...found.batched][0], perAddressMs: perAddress, batchedMs: batched, ratio: perAddress / batched, times };
}

async function main() {
  const values = parseOptions(
    {
      rows: { type: 'string' },
      accounts: { type: 'string' },
      rounds: { type: 'string' },
      mongo: { type: 'string' },
      rtt: { type: 'string' },
      label: { type: 'string' },
    },
    HELP,
  );
  const rows = int('rows', values.rows, 2000, 1, 50_000);
  const accounts = int('accounts', values.accounts, 1000, 0, rows);
  const rounds = int('rounds', values.rounds, 5, 1, 50);
  const urls = (values.mongo ?? process.env.MONGO_URL ?? '')
    .split(',')
    .map((url) => url.trim())
    .filter(Boolean);
  for (const url of urls) if (!/^mongodb:\/\//.test(url)) throw new UsageError(`--mongo: not a mongodb:// URL: ${url}`);
  const rtts = (values.rtt ?? '0,2').split(',').map((raw) => int('rtt', raw.trim(), 0, 0, 100));
  checkBuilt(BUILT);
  const { openDatabase, connectMongo } = await load('packages/platform/dist/index.js');
  const { SqliteUserRepository } = await load('services/identity/dist/repositories/sqlite/sqlite-user-repository.js');
  const { IDENTITY_MIGRATIONS } = await load('services/identity/dist/repositories/sqlite/migrations.js');
  const { MongoUserRepository } = await load('services/identity/dist/repositories/mongo/mongo-user-repository.js');

  const startedAt = new Date();
  const stamp = stampOf(startedAt);
  const machine = machineInfo();
  const temp = makeTempDir('bench-lookups-');
  const stopWatchdog = startWatchdog(120 + urls.length * rtts.length * (60 + rounds * 30));
  console.log(describeMachine('lookups', machine));
  console.log(`  a day of ${rows} appointments, ${accounts} of their addresses with an account; ${rounds} rounds per way`);

  const tag = Date.now().toString(36);
  const holders = Array.from({ length: accounts }, (_, index) => account(index, tag));
  // The day's addresses: the accounts', and ticket holders without one.
  const addresses = [
    ...holders.map((holder) => holder.email),
    ...Array.from({ length: rows - accounts }, (_, index) => `ticket${index}_${tag}@example.org`),
  ];

  const stores = [];
  const sqlite = new SqliteUserRepository(openDatabase(join(temp, 'identity.db'), IDENTITY_MIGRATIONS));
  for (const holder of holders) await sqlite.create(holder, []);
  stores.push({ store: 'SQLite (all-in-one)', rttMs: 0, ...(await measure(sqlite, addresses, rounds)) });
  console.log(`  SQLite: done`);

  for (const [index, direct] of urls.entries()) {
    for (const rtt of rtts) {
      const url = rtt === 0 ? direct : await delayedMongoUrl(direct, rtt, `proxy-${index}-${rtt}ms`);
      const connection = await orFail(connectMongo(url, `bench_lookups_${tag}_${rtt}ms`, { serialWrites: 'auto' }));
      try {
        const users = new MongoUserRepository(connection);
        await users.ensureIndexes();
        console.log(`  ${direct} + ${rtt} ms: creating ${accounts} accounts`);
        for (const holder of holders) await users.create(holder, []);
        const buildInfo = await connection.db.admin().command({ buildInfo: 1 });
        const ferret = buildInfo.ferretdbVersion ?? buildInfo.ferretdb?.version;
        const server = ferret ? `FerretDB ${ferret === 'unknown' ? 'v1 (SQLite)' : ferret}` : `MongoDB-wire ${buildInfo.version}`;
        stores.push({ store: server, url: direct, rttMs: rtt, ...(await measure(users, addresses, rounds)) });
        console.log(`  ${server} + ${rtt} ms: done`);
      } finally {
        await connection.db.dropDatabase().catch(() => undefined);
        await connection.close();
      }
    }
  }
  stopWatchdog();

  printTable(
    ['store', '+ rtt', 'accounts found', 'one query per address', 'findByEmails', 'per address / batched'],
    stores.map((entry) => [
      entry.store,
      `${entry.rttMs} ms`,
      `${entry.accountsFound} of ${rows}`,
      `${entry.perAddressMs.toFixed(1)} ms`,
      `${entry.batchedMs.toFixed(1)} ms`,
      `${entry.ratio.toFixed(1)}x`,
    ]),
  );
  writeResult('lookups', stamp, {
    bench: 'lookups',
    startedAt: startedAt.toISOString(),
    commit: gitDescribe(),
    label: values.label ?? process.env.BENCH_LABEL ?? '',
    machine,
    settings: { rows, accounts, rounds, rttMs: rtts },
    stores,
  });
}

await runBench('lookups', main);
