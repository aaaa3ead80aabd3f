#!/usr/bin/env node
// The import bench: does a box office's CSV of 5,000 lines (about 2 MB, the largest taken) hold
// the all-in-one process, so that every other request waits behind it? An administrator imports
// the file while a probe asks the portal for the session, one request after another; the
// baseline, measured in the same run, is the same probe with nothing else happening.
//
//   npm run bench:import -- [--rows 5000] [--rounds 3] [--interval 10] [--day-requests 5]
//
// It builds nothing: run `npm run build` first. All traffic goes to 127.0.0.1.
import { login } from '../lib/http.mjs';
import { cpuMeter, percentile } from '../lib/measure.mjs';
import { ADMIN, ALL_IN_ONE_BUILT, startAllInOne } from '../lib/portal.mjs';
import {
  checkBuilt,
  describeMachine,
  gitDescribe,
  intOption as int,
  machineInfo,
  makeTempDir,
  parseOptions,
  printTable,
  runBench,
  stampOf,
  startWatchdog,
  writeResult,
} from '../lib/runner.mjs';

const HELP = `Usage: npm run bench:import -- [options]   (or: node bench/import/run.mjs [options])

Imports a box office's CSV (POST /api/appointments/import) into the all-in-one portal while a
probe asks GET /api/session again and again, one request at a time; prints how long the probe's
requests waited during the import against the same probe with the portal idle.

Options:
  -r, --rows <n>        lines of the CSV (each about 380 bytes: 5000 is about 1.9 MB)  default 5000
      --rounds <n>      imports, each of a new file (new addresses)                     default 3
      --interval <ms>   the probe's pause between two requests                          default 10
      --idle <s>        how long the baseline probe runs with the portal idle           default 3
      --after <s>       how long the probe goes on after the import answered            default 5
                        (the events it wrote are published and handled then)
      --day-requests <n> then, the day's call sheet and announcement count, each asked   default 5
                        this many times (every row of every round is on that day)
      --label <text>    a note stored in the JSON result
  -h, --help            this text

The result is also written to bench/results/import-<timestamp>.json. Build first: npm run build.`;

/** The day every line of every round starts on (a month ahead, in the event's zone, UTC). */
const DAY = new Date(Date.now() + 30 * 86_400_000).toISOString().slice(0, 10);

/** A festival's file: every line a new address, a start in the future, a number, a place and a note. */
function boxOfficeCsv(rows, round) {
  const lines = ['email,start,phone,place,note'];
  const day = DAY;
  const note = 'Bring the ticket and a charged phone; wired headphones help in the noise of the square. '.repeat(3).trim();
  for (let i = 0; i < rows; i++) {
    const minutes = 10 * 60 + (i % 600);
    const time = `${String(Math.floor(minutes / 60)).padStart(2, '0')}:${String(minutes % 60).padStart(2, '0')}`;
    lines.push(
      `ticket${round}_${i}@example.org,${day}T${time},(202) 555-${String(1000 + (i % 9000)).padStart(4, '0')},"Corner of Main Street and First Avenue, gate ${i % 12}",${note}`,
    );
  }
  return `${lines.join('\r\n')}\r\n`;
}

/**
 * Asks for the session one request after another until `until` resolves; answers each request's
 * time in ms and how many failed (a request the portal could not answer: the gateway's 503 when
 * identity did not answer in time).
 */
async function probe(url, cookie, intervalMs, until) {
  const times = [];
  let failed = 0;
  let done = false;
  until.then(
    () => (done = true),
    () => (done = true),
  );
  while (!done) {
    const started = performance.now();
    const response = await fetch(`${url}/api/session`, { headers: { cookie }, signal: AbortSignal.timeout(60_000) });
    await response.arrayBuffer();
    if (response.status !== 200) failed++;
    times.push(performance.now() - started);
    await new Promise((resolve) => setTimeout(resolve, intervalMs));
  }
  return Object.assign(times, { failed });
}

/** `count` requests one after another; each answer checked; their times in ms (p50, max). */
async function timeRequests(url, cookie, path, init, count, check) {
  const times = [];
  for (let i = 0; i < count; i++) {
    const started = performance.now();
    const response = await fetch(`${url}${path}`, {
      ...init,
      headers: { cookie, ...(init.body ? { 'content-type': 'application/json' } : {}) },
      signal: AbortSignal.timeout(120_000),
    });
    const text = await response.text();
    times.push(performance.now() - started);
    if (response.status !== 200) throw new Error(`${path} answered ${response.status}: ${text.slice(0, 300)}`);
    check(JSON.parse(text));
  }
  return { requests: count, p50: percentile(times, 50), max: Math.max(...times) };
}

const percent = (share) => (share === null || share === undefined ? '-' : `${(share * 100).toFixed(0)} %`);
const ms = (value) => (value === null ? '-' : `${value.toFixed(1)} ms`);

await runBench('import', async () => {
  const values = parseOptions(
    {
      rows: { type: 'string', short: 'r' },
      rounds: { type: 'string' },
      interval: { type: 'string' },
      idle: { type: 'string' },
      after: { type: 'string' },
      'day-requests': { type: 'string' },
      label: { type: 'string' },
    },
    HELP,
  );
  const rows = int('rows', values.rows, 5000, 10, 20_000);
  const rounds = int('rounds', values.rounds, 3, 1, 20);
  const interval = int('interval', values.interval, 10, 0, 1000);
  const idleSeconds = int('idle', values.idle, 3, 1, 60);
  const afterSeconds = int('after', values.after, 5, 0, 120);
  const dayRequests = int('day-requests', values['day-requests'], 5, 1, 100);
  checkBuilt(ALL_IN_ONE_BUILT);
  startWatchdog(600 + rounds * 120);
  const temp = makeTempDir('bench-import-');
  const machine = machineInfo();
  console.log(describeMachine('import', machine));

  // Text messages and e-mails to the outboxes (no provider), the event's zone UTC.
  const portal = await startAllInOne(temp, { EVENT_TIMEZONE: 'UTC', APPOINTMENT_REMINDERS: '24h', RATE_LIMIT_PER_MINUTE: '0' });
  const cookie = await login(portal.url, ADMIN);
  const cpu = cpuMeter([{ name: 'portal', child: portal.entry.child }]);

  const report = { rows, rounds, interval, baseline: null, imports: [] };
  const idle = await probe(portal.url, cookie, interval, new Promise((resolve) => setTimeout(resolve, idleSeconds * 1000)));
  report.baseline = {
    requests: idle.length,
    failed: idle.failed,
    p50: percentile(idle, 50),
    p99: percentile(idle, 99),
    max: Math.max(...idle),
  };

  for (let round = 1; round <= rounds; round++) {
    const csv = boxOfficeCsv(rows, `${Date.now().toString(36)}r${round}`);
    const form = new FormData();
    form.append('file', new Blob([csv], { type: 'text/csv' }), 'tickets.csv');
    const started = performance.now();
    const importing = fetch(`${portal.url}/api/appointments/import`, {
      method: 'POST',
      headers: { cookie },
      body: form,
      signal: AbortSignal.timeout(300_000),
    }).then(async (response) => {
      const text = await response.text();
      if (response.status !== 200) throw new Error(`the import answered ${response.status}: ${text.slice(0, 300)}`);
      return JSON.parse(text);
    });
    // The probe goes on a while after the answer: the events the import wrote are published and
    // handled then (the confirmations queued), in the same process.
    let seconds = 0;
    const aftermath = importing.then(async () => {
      seconds = (performance.now() - started) / 1000;
      await new Promise((resolve) => setTimeout(resolve, afterSeconds * 1000));
    });
    const [times, result] = await Promise.all([probe(portal.url, cookie, interval, aftermath), importing]);
    if (result.created.length !== rows)
      throw new Error(`the import created ${result.created.length} of ${rows}: ${JSON.stringify(result.refused.slice(0, 3))}`);
    report.imports.push({
      round,
      bytes: Buffer.byteLength(csv),
      seconds,
      requests: times.length,
      failed: times.failed,
      p50: percentile(times, 50),
      p99: percentile(times, 99),
      max: Math.max(...times),
    });
  }

  // The day the imports filled, as the performers' Today screen asks for it and as the announce
  // dialog counts it (each row's account looked up), one request at a time, the portal otherwise
  // idle; against the idle probe's p50.
  const sheetRows = rows * rounds;
  report.day = {
    rows: sheetRows,
    callSheet: await timeRequests(portal.url, cookie, `/api/appointments?date=${DAY}`, {}, dayRequests, (body) => {
      if (body.appointments.length !== sheetRows) throw new Error(`the call sheet has ${body.appointments.length} of ${sheetRows} rows`);
    }),
    announceCount: await timeRequests(
      portal.url,
      cookie,
      '/api/appointments/announce?dry_run=true',
      { method: 'POST', body: JSON.stringify({ date: DAY, text: 'bad-weather' }) },
      dayRequests,
      (body) => {
        if (body.recipients !== sheetRows) throw new Error(`the announcement counts ${body.recipients} of ${sheetRows}`);
      },
    ),
  };

  const worst = Math.max(...report.imports.map((entry) => entry.max));
  printTable(
    ['probe (GET /api/session)', 'requests', 'failed', 'p50', 'p99', 'max', 'import'],
    [
      [
        'idle (baseline)',
        report.baseline.requests,
        report.baseline.failed,
        ms(report.baseline.p50),
        ms(report.baseline.p99),
        ms(report.baseline.max),
        '-',
      ],
      ...report.imports.map((entry) => [
        `during import ${entry.round} and ${afterSeconds} s after (${(entry.bytes / 1024 / 1024).toFixed(2)} MB, ${rows} lines)`,
        entry.requests,
        entry.failed,
        ms(entry.p50),
        ms(entry.p99),
        ms(entry.max),
        `${entry.seconds.toFixed(1)} s`,
      ]),
    ],
  );
  printTable(
    [`the day of the imports (${sheetRows} appointments), idle`, 'requests', 'p50', 'max', 'p50 / idle probe p50'],
    [
      ['GET /api/appointments?date= (the call sheet)', report.day.callSheet],
      ['POST /api/appointments/announce?dry_run=true (the count)', report.day.announceCount],
    ].map(([name, entry]) => [name, entry.requests, ms(entry.p50), ms(entry.max), `${(entry.p50 / report.baseline.p50).toFixed(0)}x`]),
  );
  report.worstWaitMs = worst;
  report.ratioP99 = Math.max(...report.imports.map((entry) => entry.p99)) / report.baseline.p99;
  report.cpu = cpu.stop();
  const failures = report.imports.reduce((sum, entry) => sum + entry.failed, 0);
  console.log(`  worst wait of a request during an import: ${worst.toFixed(1)} ms (goal: under 100 ms); requests that failed: ${failures}`);
  console.log(`  p99 during the imports against p99 idle: ${report.ratioP99.toFixed(1)}x`);
  console.log(
    `  CPU: portal ${percent(report.cpu.cpu.portal)}, bench ${percent(report.cpu.cpu.bench)}, other ${percent(report.cpu.otherCpu)} (of one core)`,
  );
  writeResult('import', stampOf(new Date()), {
    ...report,
    label: values.label ?? null,
    command: process.argv.slice(2),
    machine,
    git: gitDescribe(),
  });
});
