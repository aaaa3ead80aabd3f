#!/usr/bin/env node
// The gateway bench: the same GET /api/user sent (a) directly to the identity service, with the
// signed identity header the gateway would add, and (b) through the gateway with the session
// cookie, in one run, on one machine, with the same load. The headline is the ratio (b)/(a).
//
//   npm run bench:gateway -- [--connections 20] [--duration 10] [--warmup 3] [--rounds 1]
//                            [--all-in-one] [--stub] [--compare-gateway path/to/main.js]
//                            [--compare-identity path/to/main.js]
//                            [--rate-limit 0] [--profile] [--label text]
//
// It builds nothing: run `npm run build` (or `npx tsc -b`) first. All traffic goes to 127.0.0.1.
// See bench/gateway/README.md for how to read the result.
import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync } from 'node:fs';
import { join, relative, resolve as resolvePath } from 'node:path';
import { pathToFileURL } from 'node:url';
import { formatProfile, summarizeProfile } from './profile-top.mjs';
import { freePort, getJson, login as loginAs, waitFor } from '../lib/http.mjs';
import { CANNON_HEADER, averageRuns, cannonCells, cannonWarnings, measureRounds } from '../lib/measure.mjs';
import { ADMIN } from '../lib/portal.mjs';
import {
  HOST,
  RESULTS_DIR,
  ROOT,
  UsageError,
  checkBuilt,
  describeMachine,
  envFlag,
  failure,
  gitDescribe,
  intOption as int,
  machineInfo,
  makeTempDir,
  parseOptions,
  printTable,
  runBench,
  stampOf,
  startChild,
  startWatchdog,
  stopChildren,
  writeResult,
} from '../lib/runner.mjs';

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
      --compare-identity <main.js>
                          also measure a second identity build (direct, same data, same
                          session); with --compare-gateway, the compared gateway proxies to it,
                          so the compared pair is the whole "before". Keep a build with
                          node bench/gateway/keep-build.mjs <name> (see bench/gateway/README.md)
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
  const values = parseOptions(
    {
      connections: { type: 'string', short: 'c' },
      duration: { type: 'string', short: 'd' },
      warmup: { type: 'string', short: 'w' },
      rounds: { type: 'string', short: 'r' },
      'all-in-one': { type: 'boolean' },
      stub: { type: 'boolean' },
      'compare-gateway': { type: 'string' },
      'compare-identity': { type: 'string' },
      'rate-limit': { type: 'string' },
      profile: { type: 'boolean' },
      label: { type: 'string' },
    },
    HELP,
  );
  if (values.stub && values['compare-identity'])
    throw new UsageError('--stub and --compare-identity do not go together (the stand-in replaces identity)');
  if (values.stub && values['all-in-one'])
    throw new UsageError('--stub and --all-in-one do not go together (the all-in-one process has no stand-in)');
  const env = process.env;
  return {
    connections: int('connections', values.connections ?? env.BENCH_CONNECTIONS, 20, 1, 1000),
    duration: int('duration', values.duration ?? env.BENCH_DURATION, 10, 1, 300),
    warmup: int('warmup', values.warmup ?? env.BENCH_WARMUP, 3, 0, 60),
    rounds: int('rounds', values.rounds ?? env.BENCH_ROUNDS, 1, 1, 10),
    allInOne: values['all-in-one'] ?? envFlag(env.BENCH_ALL_IN_ONE),
    stub: values.stub ?? envFlag(env.BENCH_STUB),
    compareGateway: values['compare-gateway'] ? resolvePath(values['compare-gateway']) : undefined,
    compareIdentity: values['compare-identity'] ? resolvePath(values['compare-identity']) : undefined,
    rateLimit: int('rate-limit', values['rate-limit'] ?? env.BENCH_RATE_LIMIT, 0, 0, 1e12),
    profile: values.profile ?? false,
    label: values.label ?? env.BENCH_LABEL ?? '',
  };
}

const login = (baseUrl) => loginAs(baseUrl, ADMIN);

// --- the run -----------------------------------------------------------------------------------

async function main() {
  const settings = settingsFromArgs();
  checkBuilt([
    'packages/contracts/dist/index.js',
    'packages/platform/dist/index.js',
    'services/identity/dist/main.js',
    'services/gateway/dist/main.js',
    'packages/all-in-one/dist/main.js',
  ]);
  const { IdentityTokens, IDENTITY_HEADER, SERVICE_TOKEN_HEADER } = await import(
    pathToFileURL(join(ROOT, 'packages/platform/dist/index.js')).href
  );

  const startedAt = new Date();
  const stamp = stampOf(startedAt);
  const tempDir = makeTempDir('portal-bench-gateway-');
  const profileDir = settings.profile ? join(RESULTS_DIR, `profiles-${stamp}`) : undefined;
  if (profileDir) mkdirSync(profileDir, { recursive: true });

  if (settings.compareGateway && !existsSync(settings.compareGateway)) {
    throw new UsageError(`--compare-gateway: no such file ${settings.compareGateway}`);
  }
  if (settings.compareIdentity && !existsSync(settings.compareIdentity)) {
    throw new UsageError(`--compare-identity: no such file ${settings.compareIdentity}`);
  }
  const targetsCount = 2 + (settings.allInOne ? 1 : 0) + (settings.compareGateway ? 1 : 0) + (settings.compareIdentity ? 1 : 0);
  const budgetS =
    90 + settings.rounds * targetsCount * (settings.duration + 2) + targetsCount * (settings.warmup + 2) + (settings.allInOne ? 30 : 0);
  const stopWatchdog = startWatchdog(budgetS);

  const machine = machineInfo();
  console.log(describeMachine('gateway', machine));
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

  // A second identity build on the same data (the same accounts and sessions): before/after.
  let compareIdentity;
  let compareIdentityUrl;
  if (settings.compareIdentity) {
    const port = await freePort();
    compareIdentityUrl = `http://${HOST}:${port}`;
    compareIdentity = startChild(
      'compareIdentity',
      relative(ROOT, settings.compareIdentity),
      { DATA_DIR: dataDir, INTERNAL_SECRET: internalSecret, IDENTITY_HOST: HOST, IDENTITY_PORT: String(port), ...admin },
      { profileDir },
    );
    await Promise.race([waitFor(`${compareIdentityUrl}/healthz`, 'the identity to compare'), failure]);
  }
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
      // its metrics listener on a free loopback port, not the default 9464 (a second gateway, other runs)
      METRICS_HOST: HOST,
      METRICS_PORT: String(await freePort()),
    },
    { profileDir },
  );
  // /healthz, not /readyz: readiness also asks the evidence service, which this bench does not start.
  await Promise.race([waitFor(`${gatewayUrl}/healthz`, 'gateway'), failure]);

  let compare;
  let compareUrl;
  if (settings.compareGateway) {
    const port = await freePort();
    compareUrl = `http://${HOST}:${port}`;
    compare = startChild(
      'compare',
      relative(ROOT, settings.compareGateway),
      {
        DATA_DIR: dataDir,
        INTERNAL_SECRET: internalSecret,
        HOST,
        PORT: String(port),
        IDENTITY_URL: compareIdentityUrl ?? identityUrl,
        RATE_LIMIT_PER_MINUTE: String(settings.rateLimit),
        WEB_DIST: join(tempDir, 'no-web'),
        METRICS_HOST: HOST,
        METRICS_PORT: String(await freePort()),
      },
      { profileDir },
    );
    await Promise.race([waitFor(`${compareUrl}/healthz`, 'the gateway to compare'), failure]);
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
      {
        DATA_DIR: aioData,
        HOST,
        PORT: String(port),
        IDENTITY_PORT: '0',
        RATE_LIMIT_PER_MINUTE: String(settings.rateLimit),
        WEB_DIST: join(tempDir, 'no-web'),
        INTERNAL_SECRET: randomBytes(32).toString('base64url'),
        ...admin,
      },
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
    throw new Error(
      `direct and proxied GET /api/user differ:\n  direct  ${JSON.stringify(directUser)}\n  proxied ${JSON.stringify(proxiedUser)}`,
    );
  }

  const targets = [
    { key: 'direct', title: `direct to ${upstreamName}`, url: `${identityUrl}/api/user`, headers: directHeaders },
    { key: 'proxied', title: 'through the gateway', url: `${gatewayUrl}/api/user`, headers: { cookie } },
  ];
  if (compareIdentity) {
    const compared = await getJson(`${compareIdentityUrl}/api/user`, directHeaders);
    if (JSON.stringify(compared) !== JSON.stringify(directUser))
      throw new Error('the identity to compare answers GET /api/user differently');
    targets.push({
      key: 'compareDirect',
      title: 'direct to the compared identity',
      url: `${compareIdentityUrl}/api/user`,
      headers: directHeaders,
    });
  }
  if (compare) {
    const compared = await getJson(`${compareUrl}/api/user`, { cookie });
    if (JSON.stringify(compared) !== JSON.stringify(proxiedUser))
      throw new Error('the gateway to compare answers GET /api/user differently');
    targets.push({ key: 'compare', title: 'through the compared gateway', url: `${compareUrl}/api/user`, headers: { cookie } });
  }
  if (allInOne) {
    const aioCookie = await login(allInOneUrl);
    await getJson(`${allInOneUrl}/api/user`, { cookie: aioCookie });
    targets.push({ key: 'allInOne', title: 'all-in-one process', url: `${allInOneUrl}/api/user`, headers: { cookie: aioCookie } });
  }
  const processes = [
    identity,
    gateway,
    ...(compareIdentity ? [compareIdentity] : []),
    ...(compare ? [compare] : []),
    ...(allInOne ? [allInOne] : []),
  ];

  const runs = await measureRounds(targets, settings, processes);
  stopWatchdog();

  const results = Object.fromEntries(
    targets.map((t) => [t.key, { title: t.title, url: t.url, ...averageRuns(runs[t.key]), rounds: runs[t.key] }]),
  );
  const ratio = results.proxied.rps / results.direct.rps;
  const ratioAllInOne = results.allInOne ? results.allInOne.rps / results.direct.rps : undefined;
  const ratioCompare = results.compare ? results.compare.rps / results.direct.rps : undefined;
  const ratioCompareDirect = results.compareDirect ? results.compareDirect.rps / results.direct.rps : undefined;

  await stopChildren();

  printResults(targets, results, { ratio, ratioAllInOne, ratioCompare, ratioCompareDirect }, machine, upstreamName);

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
    ...(ratioCompareDirect !== undefined ? { ratioCompareDirect, compareIdentity: relative(ROOT, settings.compareIdentity) } : {}),
    cpuPerRequestUs: perRequestSummary(results),
    results,
    ...(profiles ? { profiles } : {}),
  };
  writeResult('gateway', stamp, report);
}

/**
 * CPU µs per request of each service, each measured where it does the work: identity (and the
 * compared identity) from the direct targets, each gateway from its own proxied target.
 */
function perRequestSummary(results) {
  const at = (key, name) => results[key]?.cpuPerRequestUs[name] ?? undefined;
  return {
    identity: at('direct', 'identity'),
    gateway: at('proxied', 'gateway'),
    ...(results.compareDirect ? { compareIdentity: at('compareDirect', 'compareIdentity') } : {}),
    ...(results.compare ? { compareGateway: at('compare', 'compare') } : {}),
  };
}

function printResults(targets, results, { ratio, ratioAllInOne, ratioCompare, ratioCompareDirect }, machine, upstreamName) {
  const cpuNames = Object.keys(results.direct.cpu);
  const header = ['target', ...CANNON_HEADER, ...cpuNames.map((n) => `CPU ${n}`), 'CPU other'];
  const rows = targets.map((t) => [t.title, ...cannonCells(results[t.key], cpuNames)]);
  printTable(header, rows);
  console.log(`  proxied / direct = ${ratio.toFixed(2)}   (goal: >= 0.50; a ratio within this run, not an absolute figure)`);
  if (ratioCompare !== undefined) console.log(`  compared gateway / direct = ${ratioCompare.toFixed(2)}`);
  if (ratioCompareDirect !== undefined) console.log(`  compared identity direct / identity direct = ${ratioCompareDirect.toFixed(2)}`);
  if (ratioAllInOne !== undefined) console.log(`  all-in-one / direct = ${ratioAllInOne.toFixed(2)}`);
  const perRequest = (key, name) => {
    const us = results[key]?.cpuPerRequestUs[name];
    return us === null || us === undefined ? '-' : `${Math.round(us)} µs`;
  };
  console.log(
    `  CPU per request: ${upstreamName} ${perRequest('direct', upstreamName)} direct, ${perRequest('proxied', upstreamName)} behind the gateway;` +
      ` gateway ${perRequest('proxied', 'gateway')}` +
      (ratioCompareDirect !== undefined ? `; compared identity ${perRequest('compareDirect', 'compareIdentity')} direct` : '') +
      (ratioCompare !== undefined ? `; compared gateway ${perRequest('compare', 'compare')}` : '') +
      (ratioAllInOne !== undefined ? `; all-in-one ${perRequest('allInOne', 'allInOne')}` : '') +
      `; load generator ${perRequest('proxied', 'bench')} (proxied)`,
  );
  if (ratioCompareDirect !== undefined || ratioCompare !== undefined) {
    const summary = perRequestSummary(results);
    const line = (what, now, then) =>
      then === undefined
        ? ''
        : `  ${what}: ${Math.round(now)} µs per request, compared build ${Math.round(then)} µs (${(now / then).toFixed(2)} of it)\n`;
    process.stdout.write(
      `  before/after, CPU per request:\n` +
        line('identity (direct)', summary.identity, summary.compareIdentity) +
        line('gateway (proxying)', summary.gateway, summary.compareGateway),
    );
  }
  console.log(`  CPU = share of one core used during the measurement (${machine.cpus} cores in all; the load generator is "bench")`);
  cannonWarnings(targets, results);
}

await runBench('gateway', main);
