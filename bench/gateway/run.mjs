#!/usr/bin/env node
// The gateway bench: the same GET /api/user sent (a) directly to the identity service, with the
// signed identity header the gateway would add, and (b) through the gateway with the session
// cookie, in one run, on one machine, with the same load. The headline is the ratio (b)/(a).
//
//   npm run bench:gateway -- [--connections 20] [--duration 10] [--warmup 3] [--rounds 1]
//                            [--all-in-one] [--stub] [--compare-gateway path/to/main.js]
//                            [--rate-limit 0] [--profile] [--label text]
//
// It builds nothing: run `npm run build` (or `npx tsc -b`) first. All traffic goes to 127.0.0.1.
// See bench/README.md for how to read the result.
import { execFileSync, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { closeSync, existsSync, mkdirSync, mkdtempSync, openSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { cpus, loadavg, platform, release, tmpdir, totalmem } from 'node:os';
import { join, relative, resolve as resolvePath } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import autocannon from 'autocannon';
import { formatProfile, summarizeProfile } from './profile-top.mjs';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const RESULTS_DIR = join(ROOT, 'bench', 'results');
const GUARD = join(ROOT, 'bench', 'gateway', 'child-guard.mjs');
const HOST = '127.0.0.1';
const ADMIN = { username: 'benchadmin', email: 'benchadmin@example.org', password: 'bench-admin-pass-1' };

// --- settings --------------------------------------------------------------------------------

const HELP = `Usage: npm run bench:gateway -- [options]   (or: node bench/gateway/run.mjs [options])

Measures GET /api/user sent directly to identity (with the identity header the gateway would
add) against the same GET through the gateway (with the session cookie), in one run.

Options (environment variable in brackets):
  -c, --connections <n>   concurrent connections per measurement   [BENCH_CONNECTIONS]  default 20
  -d, --duration <s>      seconds measured per target and round     [BENCH_DURATION]     default 10
  -w, --warmup <s>        seconds of unmeasured load per target first [BENCH_WARMUP]    default 3
  -r, --rounds <n>        rounds (targets alternate order each round) [BENCH_ROUNDS]     default 1
      --all-in-one        also measure the all-in-one process (third target) [BENCH_ALL_IN_ONE=1]
      --stub              put a trivial stand-in (bench/gateway/stub-upstream.mjs) in place of
                          identity: shows the gateway's own ceiling and cost [BENCH_STUB=1]
      --compare-gateway <main.js>
                          also measure a second gateway build in the same run: before/after on
                          equal terms. Put the copy inside the repository (e.g. cp -r
                          services/gateway/dist bench/results/gateway-before) so that its imports
                          resolve; bench/gateway/bare-proxy.mjs (with --stub) is the floor
      --rate-limit <n>    the gateway's RATE_LIMIT_PER_MINUTE       [BENCH_RATE_LIMIT]   default 0 (off)
                          (any value > 0 keeps the limiter on; use a huge one, e.g. 1000000000,
                          to measure its cost without being limited)
      --profile           start the services with node --cpu-prof and print the top of each profile
      --label <text>      a note stored in the JSON result (e.g. "before tuning")
  -h, --help              this text

The services log at LOG_LEVEL=info (as in production) unless BENCH_LOG_LEVEL says otherwise.
The run stops by itself; Ctrl-C stops it early. The services and their temporary data go away
either way. The result is also written to bench/results/gateway-<timestamp>.json.

Build first: npm run build (or npx tsc -b).`;

function settingsFromArgs() {
  let parsed;
  try {
    parsed = parseArgs({
      options: {
        connections: { type: 'string', short: 'c' },
        duration: { type: 'string', short: 'd' },
        warmup: { type: 'string', short: 'w' },
        rounds: { type: 'string', short: 'r' },
        'all-in-one': { type: 'boolean' },
        stub: { type: 'boolean' },
        'compare-gateway': { type: 'string' },
        'rate-limit': { type: 'string' },
        profile: { type: 'boolean' },
        label: { type: 'string' },
        help: { type: 'boolean', short: 'h' },
      },
      strict: true,
    });
  } catch (error) {
    throw new UsageError(`${error.message} (see --help)`);
  }
  const { values } = parsed;
  if (values.help) {
    console.log(HELP);
    process.exit(0);
  }
  if (values.stub && values['all-in-one']) throw new UsageError('--stub and --all-in-one do not go together (the all-in-one process has no stand-in)');
  const env = process.env;
  const int = (name, raw, fallback, min, max) => {
    const value = raw === undefined || raw === '' ? fallback : Number(raw);
    if (!Number.isInteger(value) || value < min || value > max) {
      throw new UsageError(`--${name} must be a whole number from ${min} to ${max} (got ${raw})`);
    }
    return value;
  };
  return {
    connections: int('connections', values.connections ?? env.BENCH_CONNECTIONS, 20, 1, 1000),
    duration: int('duration', values.duration ?? env.BENCH_DURATION, 10, 1, 300),
    warmup: int('warmup', values.warmup ?? env.BENCH_WARMUP, 3, 0, 60),
    rounds: int('rounds', values.rounds ?? env.BENCH_ROUNDS, 1, 1, 10),
    allInOne: values['all-in-one'] ?? ['1', 'true', 'yes'].includes(env.BENCH_ALL_IN_ONE ?? ''),
    stub: values.stub ?? ['1', 'true', 'yes'].includes(env.BENCH_STUB ?? ''),
    compareGateway: values['compare-gateway'] ? resolvePath(values['compare-gateway']) : undefined,
    rateLimit: int('rate-limit', values['rate-limit'] ?? env.BENCH_RATE_LIMIT, 0, 0, 1e12),
    profile: values.profile ?? false,
    label: values.label ?? env.BENCH_LABEL ?? '',
  };
}

class UsageError extends Error {}
class Interrupted extends Error {}

// --- child processes ---------------------------------------------------------------------------

/** Every process this bench started, until it has exited. */
const children = new Set();
let stopping = false;
let currentCannon = null;
let tempDir;

function checkBuilt() {
  const needed = [
    'packages/contracts/dist/index.js',
    'packages/platform/dist/index.js',
    'services/identity/dist/main.js',
    'services/gateway/dist/main.js',
    'packages/all-in-one/dist/main.js',
  ];
  const missing = needed.filter((file) => !existsSync(join(ROOT, file)));
  if (missing.length > 0) {
    throw new UsageError(
      `The services are not built (missing ${missing.join(', ')}).\nRun \`npm run build\` (or \`npx tsc -b\`) in ${ROOT} first.`,
    );
  }
}

async function freePort() {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.unref();
    server.on('error', reject);
    server.listen(0, HOST, () => {
      const { port } = server.address();
      server.close(() => resolve(port));
    });
  });
}

/**
 * Starts one service as a child process. Its output goes to a log file (not through this
 * process, which must stay free for the load generator); stdin is a pipe the child guard watches.
 */
function startChild(name, script, env, { profileDir } = {}) {
  const logFile = join(tempDir, `${name}.log`);
  const log = openSync(logFile, 'a');
  const args = ['--import', pathToFileURL(GUARD).href];
  if (profileDir) args.push('--cpu-prof', `--cpu-prof-dir=${profileDir}`, `--cpu-prof-name=${name}.cpuprofile`);
  args.push(join(ROOT, script));
  const child = spawn(process.execPath, args, {
    cwd: ROOT,
    env: { ...process.env, NODE_ENV: 'production', LOG_LEVEL: process.env.BENCH_LOG_LEVEL ?? 'info', ...env },
    stdio: ['pipe', log, log],
    detached: true, // its own process group: Ctrl-C reaches the bench, which stops the children in order
  });
  closeSync(log);
  const entry = { name, child, logFile, exited: null };
  entry.exited = new Promise((resolve) => child.once('exit', (code, signal) => resolve({ code, signal })));
  children.add(entry);
  void entry.exited.then(({ code, signal }) => {
    children.delete(entry);
    if (!stopping) fail(new Error(`${name} exited unexpectedly (code ${code}, signal ${signal}); its log:\n${tail(logFile)}`));
  });
  child.stdin.on('error', () => {});
  return entry;
}

function tail(file, lines = 25) {
  try {
    return readFileSync(file, 'utf8').trimEnd().split('\n').slice(-lines).map((line) => `    ${line}`).join('\n');
  } catch {
    return '    (no log)';
  }
}

async function stopChildren() {
  stopping = true;
  currentCannon?.stop();
  await Promise.all(
    [...children].map(async ({ child, exited }) => {
      try {
        child.kill('SIGTERM');
      } catch {
        // already gone
      }
      const timer = setTimeout(() => {
        try {
          child.kill('SIGKILL');
        } catch {
          // already gone
        }
      }, 8000);
      await exited;
      clearTimeout(timer);
    }),
  );
}

// Last resort: whatever way this process ends, no child stays behind.
process.on('exit', () => {
  for (const { child } of children) {
    try {
      child.kill('SIGKILL');
    } catch {
      // already gone
    }
  }
  if (tempDir) rmSync(tempDir, { recursive: true, force: true });
});

let rejectRun;
const failure = new Promise((_resolve, reject) => {
  rejectRun = reject;
});
failure.catch(() => {});
function fail(error) {
  rejectRun(error);
}

for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP']) {
  process.on(signal, () => {
    if (stopping) process.exit(130);
    console.error(`\n${signal}: stopping the services...`);
    fail(new Interrupted(`interrupted by ${signal}`));
  });
}

// --- HTTP helpers (loopback only) --------------------------------------------------------------

async function waitFor(url, what, timeoutMs = 30_000) {
  const deadline = Date.now() + timeoutMs;
  let last = '';
  while (Date.now() < deadline) {
    try {
      const response = await fetch(url, { signal: AbortSignal.timeout(1000) });
      await response.arrayBuffer();
      if (response.ok) return;
      last = `answered ${response.status}`;
    } catch (error) {
      last = error.cause?.code ?? error.message;
    }
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
  throw new Error(`${what} did not become ready at ${url} within ${timeoutMs / 1000} s (${last})`);
}

async function login(baseUrl) {
  const response = await fetch(`${baseUrl}/api/user/login`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ username: ADMIN.username, password: ADMIN.password }),
    signal: AbortSignal.timeout(10_000),
  });
  const body = await response.text();
  if (response.status !== 200) throw new Error(`login at ${baseUrl} answered ${response.status}: ${body}`);
  const cookie = response.headers.getSetCookie().map((line) => line.split(';')[0]).find((pair) => pair.includes('='));
  if (!cookie) throw new Error(`login at ${baseUrl} set no cookie`);
  return cookie;
}

async function getJson(url, headers) {
  const response = await fetch(url, { headers, signal: AbortSignal.timeout(10_000) });
  const text = await response.text();
  if (response.status !== 200) throw new Error(`GET ${url} answered ${response.status}: ${text}`);
  return JSON.parse(text);
}

// --- measuring ---------------------------------------------------------------------------------

const CLOCK_TICKS = (() => {
  try {
    return Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim()) || 100;
  } catch {
    return 100;
  }
})();

/** CPU seconds used so far by a process (Linux /proc); null where that is not available. */
function cpuSeconds(pid) {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(fields[11]) + Number(fields[12])) / CLOCK_TICKS;
  } catch {
    return null;
  }
}

/** Busy CPU seconds of the whole machine so far (Linux /proc/stat); null elsewhere. */
function machineBusySeconds() {
  try {
    const fields = readFileSync('/proc/stat', 'utf8').split('\n')[0].trim().split(/\s+/).slice(1).map(Number);
    // user nice system idle iowait irq softirq steal: everything but idle and iowait is busy
    const busy = fields[0] + fields[1] + fields[2] + fields[5] + fields[6] + (fields[7] ?? 0);
    return busy / CLOCK_TICKS;
  } catch {
    return null;
  }
}

function cannon(options) {
  return new Promise((resolve, reject) => {
    currentCannon = autocannon(options, (error, result) => {
      currentCannon = null;
      if (error) reject(error);
      else resolve(result);
    });
  });
}

/** One autocannon run against a target, with the CPU each process used meanwhile. */
async function measure(target, settings, seconds, processes) {
  const before = processes.map(({ child }) => cpuSeconds(child.pid));
  const benchBefore = process.cpuUsage();
  const machineBefore = machineBusySeconds();
  const started = process.hrtime.bigint();
  const result = await Promise.race([
    cannon({
      url: target.url,
      method: 'GET',
      headers: target.headers,
      connections: settings.connections,
      duration: seconds,
      timeout: 10,
    }),
    failure,
  ]);
  const wall = Number(process.hrtime.bigint() - started) / 1e9;
  const benchUsed = process.cpuUsage(benchBefore);
  const cpu = {};
  processes.forEach(({ name, child }, i) => {
    const after = cpuSeconds(child.pid);
    cpu[name] = after === null || before[i] === null ? null : (after - before[i]) / wall;
  });
  cpu.bench = (benchUsed.user + benchUsed.system) / 1e6 / wall;
  // Whatever else kept the machine busy meanwhile (other programs, kernel network work not
  // charged to a process): when this is high, the run was disturbed.
  const machineAfter = machineBusySeconds();
  const ours = Object.values(cpu).reduce((sum, share) => sum + (share ?? 0), 0);
  const other = machineBefore === null || machineAfter === null ? null : Math.max(0, (machineAfter - machineBefore) / wall - ours);
  // CPU time per answered request (µs): what tuning a process moves, whatever the machine's load.
  const answered = result.requests.total || 1;
  const cpuPerRequestUs = Object.fromEntries(Object.entries(cpu).map(([name, share]) => [name, share === null ? null : (share * wall * 1e6) / answered]));
  return {
    rps: result.requests.mean,
    rpsStddev: result.requests.stddev,
    requests: result.requests.total,
    latency: { mean: result.latency.mean, p50: result.latency.p50, p90: result.latency.p90, p99: result.latency.p99, max: result.latency.max },
    ok2xx: result['2xx'],
    non2xx: result.non2xx,
    errors: result.errors,
    timeouts: result.timeouts,
    cpu,
    cpuPerRequestUs,
    otherCpu: other,
  };
}

function average(runs) {
  const mean = (pick) => runs.reduce((sum, run) => sum + pick(run), 0) / runs.length;
  const sum = (pick) => runs.reduce((total, run) => total + pick(run), 0);
  const cpuNames = Object.keys(runs[0].cpu);
  return {
    rps: mean((r) => r.rps),
    rpsRounds: runs.map((r) => r.rps),
    requests: sum((r) => r.requests),
    latency: { mean: mean((r) => r.latency.mean), p50: mean((r) => r.latency.p50), p90: mean((r) => r.latency.p90), p99: mean((r) => r.latency.p99), max: Math.max(...runs.map((r) => r.latency.max)) },
    ok2xx: sum((r) => r.ok2xx),
    non2xx: sum((r) => r.non2xx),
    errors: sum((r) => r.errors),
    timeouts: sum((r) => r.timeouts),
    cpu: Object.fromEntries(cpuNames.map((name) => [name, runs.some((r) => r.cpu[name] === null) ? null : mean((r) => r.cpu[name])])),
    otherCpu: runs.some((r) => r.otherCpu === null) ? null : mean((r) => r.otherCpu),
    cpuPerRequestUs: Object.fromEntries(
      cpuNames.map((name) => [name, runs.some((r) => r.cpuPerRequestUs[name] === null) ? null : mean((r) => r.cpuPerRequestUs[name])]),
    ),
  };
}

// --- the run -----------------------------------------------------------------------------------

async function main() {
  const settings = settingsFromArgs();
  checkBuilt();
  const { IdentityTokens, IDENTITY_HEADER, SERVICE_TOKEN_HEADER } = await import(
    pathToFileURL(join(ROOT, 'packages/platform/dist/index.js')).href
  );

  const startedAt = new Date();
  const stamp = startedAt.toISOString().replace(/[:.]/g, '-');
  tempDir = mkdtempSync(join(tmpdir(), 'portal-bench-gateway-'));
  const profileDir = settings.profile ? join(RESULTS_DIR, `profiles-${stamp}`) : undefined;
  if (profileDir) mkdirSync(profileDir, { recursive: true });

  if (settings.compareGateway && !existsSync(settings.compareGateway)) {
    throw new UsageError(`--compare-gateway: no such file ${settings.compareGateway}`);
  }
  const targetsCount = 2 + (settings.allInOne ? 1 : 0) + (settings.compareGateway ? 1 : 0);
  const budgetS = 90 + settings.rounds * targetsCount * (settings.duration + 2) + targetsCount * (settings.warmup + 2) + (settings.allInOne ? 30 : 0);
  const watchdog = setTimeout(() => fail(new Error(`the run took longer than its budget of ${budgetS} s`)), budgetS * 1000);
  watchdog.unref();

  const machine = {
    cpus: cpus().length,
    cpuModel: cpus()[0]?.model ?? 'unknown',
    memoryGiB: Math.round((totalmem() / 2 ** 30) * 10) / 10,
    platform: `${platform()} ${release()}`,
    node: process.version,
    loadAverageAtStart: loadavg().map((v) => Math.round(v * 100) / 100),
  };
  console.log(`gateway bench: ${machine.cpus} cores (${machine.cpuModel}), node ${machine.node}, load average ${machine.loadAverageAtStart.join(' ')}`);
  console.log(
    `  ${settings.connections} connections, ${settings.warmup} s warm-up + ${settings.duration} s measured per target, ${settings.rounds} round(s)` +
      `, gateway rate limit ${settings.rateLimit > 0 ? `${settings.rateLimit}/min` : 'off'}${settings.profile ? ', CPU profiles on' : ''}` +
      `${settings.stub ? ', STUB upstream instead of identity' : ''}`,
  );

  // The distributed topology: identity and gateway as two processes sharing one DATA_DIR (the
  // embedded event bus file carries session revocations from identity to the gateway).
  const internalSecret = randomBytes(32).toString('base64url');
  const dataDir = join(tempDir, 'data');
  mkdirSync(dataDir);
  const [identityPort, gatewayPort] = [await freePort(), await freePort()];
  const identityUrl = `http://${HOST}:${identityPort}`;
  const gatewayUrl = `http://${HOST}:${gatewayPort}`;
  const admin = { ADMIN_USERNAME: ADMIN.username, ADMIN_EMAIL: ADMIN.email, ADMIN_PASSWORD: ADMIN.password };

  // With --stub a trivial stand-in answers where identity would: the gateway's own cost shows.
  const upstreamName = settings.stub ? 'stub' : 'identity';
  const identity = settings.stub
    ? startChild('stub', 'bench/gateway/stub-upstream.mjs', { HOST, PORT: String(identityPort) }, { profileDir })
    : startChild(
        'identity',
        'services/identity/dist/main.js',
        { DATA_DIR: dataDir, INTERNAL_SECRET: internalSecret, IDENTITY_HOST: HOST, IDENTITY_PORT: String(identityPort), ...admin },
        { profileDir },
      );
  await Promise.race([waitFor(`${identityUrl}/healthz`, upstreamName), failure]);
  const gateway = startChild(
    'gateway',
    'services/gateway/dist/main.js',
    {
      DATA_DIR: dataDir,
      INTERNAL_SECRET: internalSecret,
      HOST,
      PORT: String(gatewayPort),
      IDENTITY_URL: identityUrl,
      RATE_LIMIT_PER_MINUTE: String(settings.rateLimit),
      WEB_DIST: join(tempDir, 'no-web'), // the bench needs the API only
    },
    { profileDir },
  );
  await Promise.race([waitFor(`${gatewayUrl}/readyz`, 'gateway'), failure]);

  let compare;
  let compareUrl;
  if (settings.compareGateway) {
    const port = await freePort();
    compareUrl = `http://${HOST}:${port}`;
    compare = startChild(
      'compare',
      relative(ROOT, settings.compareGateway),
      { DATA_DIR: dataDir, INTERNAL_SECRET: internalSecret, HOST, PORT: String(port), IDENTITY_URL: identityUrl, RATE_LIMIT_PER_MINUTE: String(settings.rateLimit), WEB_DIST: join(tempDir, 'no-web') },
      { profileDir },
    );
    await Promise.race([waitFor(`${compareUrl}/readyz`, 'the gateway to compare'), failure]);
  }

  let allInOne;
  let allInOneUrl;
  if (settings.allInOne) {
    const port = await freePort();
    allInOneUrl = `http://${HOST}:${port}`;
    const aioData = join(tempDir, 'all-in-one-data');
    mkdirSync(aioData);
    allInOne = startChild(
      'allInOne',
      'packages/all-in-one/dist/main.js',
      { DATA_DIR: aioData, HOST, PORT: String(port), IDENTITY_PORT: '0', RATE_LIMIT_PER_MINUTE: String(settings.rateLimit), WEB_DIST: join(tempDir, 'no-web'), INTERNAL_SECRET: randomBytes(32).toString('base64url'), ...admin },
      { profileDir },
    );
    await Promise.race([waitFor(`${allInOneUrl}/readyz`, 'all-in-one portal', 60_000), failure]);
  }

  // A session through the gateway, then the identity the gateway resolves it to, then the
  // header the gateway would add for it.
  // (The stand-in resolves any well-formed session id; there is no login to go through.)
  const cookie = settings.stub ? `portal_session=${randomBytes(32).toString('base64url')}` : await login(gatewayUrl);
  const proxiedUser = await getJson(`${gatewayUrl}/api/user`, { cookie });
  const tokens = new IdentityTokens(internalSecret);
  const resolved = await fetch(`${identityUrl}/internal/sessions/resolve`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', [SERVICE_TOKEN_HEADER]: await tokens.signService('gateway') },
    body: JSON.stringify({ sessionId: cookie.slice(cookie.indexOf('=') + 1) }),
    signal: AbortSignal.timeout(10_000),
  });
  if (resolved.status !== 200) throw new Error(`identity did not resolve the session: ${resolved.status} ${await resolved.text()}`);
  const session = await resolved.json();
  const identityClaims = { userId: session.userId, role: session.role, username: session.username, sessionId: session.sessionId };
  // Valid for the whole run (the gateway renews its 60 s tokens; verification costs the same).
  const identityToken = await tokens.signCaller(identityClaims, budgetS + 600);
  const directHeaders = {
    [IDENTITY_HEADER]: identityToken,
    // what the gateway's rewriteRequestHeaders adds besides the identity header
    'x-request-id': 'bench-direct-0000',
    'x-forwarded-for': HOST,
    'x-forwarded-proto': 'http',
    'x-forwarded-host': `${HOST}:${gatewayPort}`,
  };
  const directUser = await getJson(`${identityUrl}/api/user`, directHeaders);
  if (JSON.stringify(directUser) !== JSON.stringify(proxiedUser)) {
    // the same GET: the same answer either way
    throw new Error(`direct and proxied GET /api/user differ:\n  direct  ${JSON.stringify(directUser)}\n  proxied ${JSON.stringify(proxiedUser)}`);
  }

  const targets = [
    { key: 'direct', title: `direct to ${upstreamName}`, url: `${identityUrl}/api/user`, headers: directHeaders },
    { key: 'proxied', title: 'through the gateway', url: `${gatewayUrl}/api/user`, headers: { cookie } },
  ];
  if (compare) {
    const compared = await getJson(`${compareUrl}/api/user`, { cookie });
    if (JSON.stringify(compared) !== JSON.stringify(proxiedUser)) throw new Error('the gateway to compare answers GET /api/user differently');
    targets.push({ key: 'compare', title: 'through the compared gateway', url: `${compareUrl}/api/user`, headers: { cookie } });
  }
  if (allInOne) {
    const aioCookie = await login(allInOneUrl);
    await getJson(`${allInOneUrl}/api/user`, { cookie: aioCookie });
    targets.push({ key: 'allInOne', title: 'all-in-one process', url: `${allInOneUrl}/api/user`, headers: { cookie: aioCookie } });
  }
  const processes = [identity, gateway, ...(compare ? [compare] : []), ...(allInOne ? [allInOne] : [])];

  for (const target of targets) {
    if (settings.warmup > 0) {
      process.stdout.write(`  warm-up: ${target.title}...`);
      const warm = await measure(target, settings, settings.warmup, processes);
      console.log(` ${Math.round(warm.rps)} req/s`);
    }
  }
  const runs = Object.fromEntries(targets.map((t) => [t.key, []]));
  for (let round = 0; round < settings.rounds; round += 1) {
    // Alternate the order so that neither target always runs on the warmer (or noisier) side.
    const order = round % 2 === 0 ? targets : [...targets].reverse();
    for (const target of order) {
      process.stdout.write(`  round ${round + 1}/${settings.rounds}: ${target.title}...`);
      const run = await measure(target, settings, settings.duration, processes);
      runs[target.key].push(run);
      console.log(` ${Math.round(run.rps)} req/s`);
    }
  }
  clearTimeout(watchdog);

  const results = Object.fromEntries(targets.map((t) => [t.key, { title: t.title, url: t.url, ...average(runs[t.key]), rounds: runs[t.key] }]));
  const ratio = results.proxied.rps / results.direct.rps;
  const ratioAllInOne = results.allInOne ? results.allInOne.rps / results.direct.rps : undefined;
  const ratioCompare = results.compare ? results.compare.rps / results.direct.rps : undefined;

  await stopChildren();

  printTable(targets, results, { ratio, ratioAllInOne, ratioCompare }, machine, upstreamName);

  let profiles;
  if (profileDir) {
    profiles = {};
    for (const file of readdirSync(profileDir).filter((f) => f.endsWith('.cpuprofile'))) {
      const path = join(profileDir, file);
      profiles[file] = relative(ROOT, path);
      console.log(`\nCPU profile ${relative(ROOT, path)} (whole process life, start-up included):`);
      console.log(formatProfile(summarizeProfile(path), 15));
    }
  }

  mkdirSync(RESULTS_DIR, { recursive: true });
  const file = join(RESULTS_DIR, `gateway-${stamp}.json`);
  const report = {
    bench: 'gateway',
    label: settings.label,
    startedAt: startedAt.toISOString(),
    machine,
    commit: gitDescribe(),
    settings,
    upstream: settings.stub ? 'stub (bench/gateway/stub-upstream.mjs)' : 'identity service',
    ratio,
    ...(ratioAllInOne !== undefined ? { ratioAllInOne } : {}),
    ...(ratioCompare !== undefined ? { ratioCompare, compareGateway: relative(ROOT, settings.compareGateway) } : {}),
    results,
    ...(profiles ? { profiles } : {}),
  };
  writeFileSync(file, `${JSON.stringify(report, null, 2)}\n`);
  console.log(`\nresult written to ${relative(ROOT, file)}`);
}

function gitDescribe() {
  try {
    const head = execFileSync('git', ['rev-parse', '--short', 'HEAD'], { cwd: ROOT, encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim();
    const dirty = execFileSync('git', ['status', '--porcelain', '--', 'services', 'packages'], { cwd: ROOT, encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim();
    return dirty ? `${head} (with uncommitted changes in services/ or packages/)` : head;
  } catch {
    return 'unknown';
  }
}

function printTable(targets, results, { ratio, ratioAllInOne, ratioCompare }, machine, upstreamName) {
  const cpuNames = Object.keys(results.direct.cpu);
  const header = ['target', 'req/s', 'p50 ms', 'p99 ms', 'errors', 'non-2xx', ...cpuNames.map((n) => `CPU ${n}`), 'CPU other'];
  const rows = targets.map((t) => {
    const r = results[t.key];
    return [
      t.title,
      Math.round(r.rps).toString(),
      r.latency.p50.toFixed(1),
      r.latency.p99.toFixed(1),
      String(r.errors + r.timeouts),
      String(r.non2xx),
      ...cpuNames.map((n) => (r.cpu[n] === null ? '-' : `${Math.round(r.cpu[n] * 100)}%`)),
      r.otherCpu === null ? '-' : `${Math.round(r.otherCpu * 100)}%`,
    ];
  });
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((row) => row[i].length)));
  const line = (cells) => `  ${cells.map((c, i) => (i === 0 ? c.padEnd(widths[i]) : c.padStart(widths[i]))).join('  ')}`;
  console.log('');
  console.log(line(header));
  console.log(line(widths.map((w) => '-'.repeat(w))));
  for (const row of rows) console.log(line(row));
  console.log('');
  console.log(`  proxied / direct = ${ratio.toFixed(2)}   (goal: >= 0.50; a ratio within this run, not an absolute figure)`);
  if (ratioCompare !== undefined) console.log(`  compared gateway / direct = ${ratioCompare.toFixed(2)}`);
  if (ratioAllInOne !== undefined) console.log(`  all-in-one / direct = ${ratioAllInOne.toFixed(2)}`);
  const perRequest = (key, name) => {
    const us = results[key]?.cpuPerRequestUs[name];
    return us === null || us === undefined ? '-' : `${Math.round(us)} µs`;
  };
  console.log(
    `  CPU per request: ${upstreamName} ${perRequest('direct', upstreamName)} direct, ${perRequest('proxied', upstreamName)} behind the gateway;` +
      ` gateway ${perRequest('proxied', 'gateway')}` +
      (ratioCompare !== undefined ? `; compared gateway ${perRequest('compare', 'compare')}` : '') +
      (ratioAllInOne !== undefined ? `; all-in-one ${perRequest('allInOne', 'allInOne')}` : '') +
      `; load generator ${perRequest('proxied', 'bench')} (proxied)`,
  );
  console.log(`  CPU = share of one core used during the measurement (${machine.cpus} cores in all; the load generator is "bench")`);
  const disturbed = targets.filter((t) => (results[t.key].otherCpu ?? 0) > 0.25);
  if (disturbed.length > 0) {
    console.log(`  NOTE: other work used over 25% of a core during ${disturbed.map((t) => t.title).join(', ')}: the machine was not quiet; repeat the run (--rounds 3)`);
  }
  const bad = targets.filter((t) => results[t.key].errors + results[t.key].timeouts + results[t.key].non2xx > 0);
  if (bad.length > 0) console.log(`  WARNING: errors or non-2xx answers for ${bad.map((t) => t.title).join(', ')}: the figures are not comparable`);
}

try {
  await Promise.race([main(), failure]);
} catch (error) {
  process.exitCode = error instanceof UsageError ? 2 : error instanceof Interrupted ? 130 : 1;
  console.error(`\n${error instanceof UsageError || error instanceof Interrupted ? '' : 'gateway bench failed: '}${error.message}`);
  if (!(error instanceof UsageError || error instanceof Interrupted)) {
    for (const { name, logFile } of children) console.error(`\n  last lines of ${name}'s log:\n${tail(logFile, 10)}`);
  }
} finally {
  await stopChildren();
  if (tempDir) rmSync(tempDir, { recursive: true, force: true });
  tempDir = undefined;
  // Nothing else should keep the process alive; make sure of it (open sockets of fetch etc.).
  setTimeout(() => process.exit(), 500).unref();
}
