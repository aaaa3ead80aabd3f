// API fuzzing of the all-in-one portal from its own OpenAPI document (schemathesis).
//
// Starts the built portal (packages/all-in-one/dist/main.js) on a free loopback port with a fresh
// temporary DATA_DIR and an administrator from ADMIN_*, registers a participant, then runs
// schemathesis three times against the served /api/openapi.json: without a session, as the
// participant, as the administrator, setting the portal up before each (seedPortal). The portal is
// always stopped and its data removed. Exits non-zero when any run fails, after printing
// schemathesis's report. See README.md here.
//
// Started by tests/fuzz/run.sh, which provides schemathesis in a virtual environment
// (SCHEMATHESIS=path of its executable). Settings (environment):
//   FUZZ_MAX_EXAMPLES   test cases per operation and phase (default 40)
//   FUZZ_SEED           schemathesis seed (default: random; printed so a run can be repeated)
//   FUZZ_RUNS           which runs, comma-separated: anonymous,participant,admin (default all)
//   FUZZ_REPORT_DIR     where the JUnit reports and the portal's log go (default tests/fuzz/report)
import { spawn } from 'node:child_process';
import { createWriteStream, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import sharp from 'sharp';

const root = fileURLToPath(new URL('../..', import.meta.url));
const here = fileURLToPath(new URL('.', import.meta.url));
const schemathesis = process.env.SCHEMATHESIS ?? 'schemathesis';
const maxExamples = Number(process.env.FUZZ_MAX_EXAMPLES ?? 40);
const seed = process.env.FUZZ_SEED ?? String(Math.floor(Math.random() * 2 ** 31));
const runs = (process.env.FUZZ_RUNS ?? 'anonymous,participant,admin').split(',').map((name) => name.trim());
const reportDir = resolve(process.env.FUZZ_REPORT_DIR ?? join(here, 'report'));

const ADMIN = { username: 'fuzz_overseer', email: 'fuzz.overseer@example.org', password: 'overseer-fuzz-pass-1' };
const PARTICIPANT = { username: 'fuzz_informant', email: 'fuzz.informant@example.org', password: 'informant-fuzz-pass-1' };

/** The caller's environment, less what would send mail or traces out of this test portal. */
function portalEnvironment() {
  const env = { ...process.env };
  delete env.SMTP_URL;
  delete env.OTEL_EXPORTER_OTLP_ENDPOINT;
  return env;
}

function freePort() {
  return new Promise((done, fail) => {
    const server = createServer();
    server.once('error', fail);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address();
      server.close(() => done(port));
    });
  });
}

async function waitUntilReady(baseUrl, portal, timeoutMs = 60_000) {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (portal.exitCode !== null) throw new Error(`the portal exited with code ${portal.exitCode} while starting`);
    try {
      const response = await fetch(`${baseUrl}/readyz`);
      if (response.ok) return;
    } catch {
      // not listening yet
    }
    await new Promise((done) => setTimeout(done, 250));
  }
  throw new Error(`the portal was not ready within ${timeoutMs / 1000} s`);
}

const photoJpeg = () =>
  sharp({ create: { width: 320, height: 240, channels: 3, background: { r: 200, g: 80, b: 40 } } })
    .jpeg()
    .toBuffer();

/** A tiny HTTP client holding one session cookie, for setting up the portal before the runs. */
function client(baseUrl) {
  let cookie = '';
  return async function call(method, path, { json, form, headers = {}, expect = [200, 201] } = {}) {
    const response = await fetch(`${baseUrl}${path}`, {
      method,
      headers: { ...headers, ...(cookie ? { cookie } : {}), ...(json !== undefined ? { 'content-type': 'application/json' } : {}) },
      body: json !== undefined ? JSON.stringify(json) : form,
    });
    const session = response.headers.getSetCookie().find((line) => line.startsWith('portal_session='));
    if (session) cookie = session.split(';')[0];
    const text = await response.text();
    if (!expect.includes(response.status)) throw new Error(`${method} ${path} answered ${response.status}: ${text}`);
    return {
      status: response.status,
      headers: response.headers,
      data: text && response.headers.get('content-type')?.includes('json') ? JSON.parse(text) : text,
    };
  };
}

/**
 * What the fuzzer should find in the portal: the participant's items (a note, a photo whose media
 * is ready, one of them public) and an unfinished resumable upload. Their ids, and the accounts'
 * ids, go into the fuzzer's dictionaries, so that it reaches the code behind "no such item".
 * Made again before every run: a run may delete items, uploads and (as an administrator) the
 * participant, who is then registered anew under another name.
 */
async function seedPortal(baseUrl, state) {
  const participant = client(baseUrl);
  const admin = client(baseUrl);
  const adminUser = (await admin('POST', '/api/user/login', { json: { username: state.admin.username, password: state.admin.password } }))
    .data;
  let login = await participant('POST', '/api/user/login', {
    json: { username: state.participant.username, password: state.participant.password },
    expect: [200, 401],
  });
  if (login.status === 401) {
    state.generation += 1;
    state.participant = {
      ...PARTICIPANT,
      username: `${PARTICIPANT.username}_${state.generation}`,
      email: PARTICIPANT.email.replace('@', `.${state.generation}@`),
    };
    await registerParticipant(baseUrl, state.participant);
    login = await participant('POST', '/api/user/login', {
      json: { username: state.participant.username, password: state.participant.password },
    });
  }
  const participantUser = login.data;
  await participant('PUT', `/api/user/watched/${participantUser.id}`);
  const note = (
    await participant('POST', '/api/evidence', { json: { title: 'A note', notes: 'Seen at the corner', location: '40.71280, -74.00600' } })
  ).data;
  const form = new FormData();
  form.append('title', 'A photo');
  form.append('file', new Blob([new Uint8Array(await photoJpeg())], { type: 'image/jpeg' }), 'photo.jpg');
  const photo = (await participant('POST', '/api/evidence', { form })).data;
  const deadline = Date.now() + 60_000;
  while ((await participant('GET', `/api/evidence/item/${photo.id}`)).data.media_status === 'processing') {
    if (Date.now() > deadline) throw new Error('the seeded photo was not processed within 60 s');
    await new Promise((done) => setTimeout(done, 250));
  }
  await admin('PUT', `/api/evidence/clearance/${photo.id}`);
  const upload = await participant('POST', '/api/evidence/uploads', {
    headers: {
      'tus-resumable': '1.0.0',
      'upload-length': '1000',
      'upload-metadata': `title ${Buffer.from('Unfinished').toString('base64')}`,
    },
  });
  const uploadId = upload.headers.get('location').split('/').pop();
  return { ids: [participantUser.id, adminUser.id, note.id, photo.id], uploadIds: [uploadId] };
}

/** The base settings plus dictionaries of real ids, bound to the path parameters that take them. */
function writeConfig(dir, name, seeded) {
  const file = join(dir, `${name}.schemathesis.toml`);
  // A JSON array of strings is a TOML array of strings.
  const dictionary = (name, values) => `[dictionaries.${name}]\nvalues = ${JSON.stringify(values)}\n`;
  writeFileSync(
    file,
    [
      readFileSync(join(here, 'schemathesis.toml'), 'utf8'),
      '# Added by run.mjs: ids of what the portal holds (see seedPortal()).',
      dictionary('ids', seeded.ids),
      dictionary('uploads', seeded.uploadIds),
      '[parameters]',
      '"path.id" = { dictionary = "ids", probability = 0.5 }',
      '"path.uploadId" = { dictionary = "uploads", probability = 0.5 }',
      '',
    ].join('\n'),
  );
  return file;
}

/** Registers a participant as the app does: multipart fields and a face photo. */
async function registerParticipant(baseUrl, account) {
  const photo = await photoJpeg();
  const form = new FormData();
  for (const [name, value] of Object.entries({
    ...account,
    phone_number: '5551234567',
    full_name: 'Fuzz Informant',
    pronouns: 'They/Them',
  })) {
    form.append(name, value);
  }
  form.append('verification_photo', new Blob([new Uint8Array(photo)], { type: 'image/jpeg' }), 'face.jpg');
  const response = await fetch(`${baseUrl}/api/user/register`, { method: 'POST', body: form });
  if (response.status !== 201) throw new Error(`registering the participant failed: ${response.status} ${await response.text()}`);
}

function runSchemathesis(name, baseUrl, account, configFile, stateFile) {
  const args = [
    '--config-file',
    configFile,
    'run',
    `${baseUrl}/api/openapi.json`,
    '--url',
    baseUrl,
    '--max-examples',
    String(maxExamples),
    '--seed',
    seed,
    '--report',
    'junit',
    '--report-junit-path',
    join(reportDir, `${name}.junit.xml`),
  ];
  const env = {
    ...process.env,
    SCHEMATHESIS_HOOKS: 'hooks',
    PYTHONDONTWRITEBYTECODE: '1',
    PYTHONPATH: [here, process.env.PYTHONPATH].filter(Boolean).join(':'),
    FUZZ_BASE_URL: baseUrl,
    FUZZ_USERNAME: account?.username ?? '',
    FUZZ_PASSWORD: account?.password ?? '',
    FUZZ_STATE_FILE: stateFile,
  };
  console.log(`schemathesis: ${name} (${account ? `session of ${account.username}` : 'no session'})`);
  // schemathesis's console report goes to a file, printed only when the run fails: its closing
  // lines are pytest-style ("=== 2 warnings in 29.34s ==="), and CI's output must close on the
  // one summary of every suite (scripts/test-summary.mjs), not on a line that reads as a test
  // runner that ran nothing.
  const consoleFile = join(reportDir, `${name}.console.log`);
  const consoleLog = createWriteStream(consoleFile);
  const started = Date.now();
  return new Promise((done, fail) => {
    const child = spawn(schemathesis, args, { cwd: root, env, stdio: ['ignore', 'pipe', 'pipe'] });
    child.stdout.pipe(consoleLog, { end: false });
    child.stderr.pipe(consoleLog, { end: false });
    child.once('error', fail);
    child.once('close', (code, signal) => {
      consoleLog.end(() => {
        const text = readFileSync(consoleFile, 'utf8');
        const cases = /(\d+) generated, (\d+) passed(?:, (\d+) failed)?(?:, (\d+) skipped)?/.exec(text);
        const outcome = code === 0 ? 'passed' : 'FAILED';
        const figures = cases
          ? `${cases[1]} cases generated: ${cases[2]} ok, ${cases[3] ?? 0} not ok, ${cases[4] ?? 0} skipped`
          : 'no case count in its report';
        console.log(`  ${outcome}: ${figures} (console report: ${consoleFile})`);
        if (code !== 0) {
          console.log(`----- schemathesis console report of the ${name} run -----`);
          console.log(text);
          console.log(`----- end of the ${name} report -----`);
        }
        done({ name, code: code ?? (signal ? 128 : 1), seconds: (Date.now() - started) / 1000 });
      });
    });
  });
}

async function main() {
  mkdirSync(reportDir, { recursive: true });
  const workDir = mkdtempSync(join(tmpdir(), 'portal-fuzz-'));
  const dataDir = join(workDir, 'data');
  const port = await freePort();
  const baseUrl = `http://127.0.0.1:${port}`;
  const logFile = join(reportDir, 'portal.log');
  const log = createWriteStream(logFile);
  const portal = spawn(process.execPath, [join(root, 'packages/all-in-one/dist/main.js')], {
    cwd: root,
    env: {
      ...portalEnvironment(),
      DATA_DIR: dataDir,
      HOST: '127.0.0.1',
      PORT: String(port),
      ADMIN_USERNAME: ADMIN.username,
      ADMIN_EMAIL: ADMIN.email,
      ADMIN_PASSWORD: ADMIN.password,
      RATE_LIMIT_PER_MINUTE: '0',
      AUTH_RATE_LIMITS: 'false',
      LOG_LEVEL: 'debug',
      PUBLIC_URL: baseUrl,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  // The gateway logs one line per request (2xx at debug): counted per run, by status class. These
  // counts are the portal's own view, independent of schemathesis: a 5xx here fails nothing by
  // itself, but schemathesis's not_a_server_error check fails the run on it.
  const counts = new Map();
  let current = 'setup';
  let pending = '';
  portal.stdout.on('data', (chunk) => {
    const lines = (pending + chunk.toString('utf8')).split('\n');
    pending = lines.pop() ?? '';
    for (const line of lines) {
      if (!line.includes('"service":"gateway"') || !line.includes('"msg":"request"')) {
        // The log keeps what is worth reading: info and above (debug is on for the counting only).
        if (!/"level":(10|20),/.test(line)) log.write(`${line}\n`);
        continue;
      }
      const { status } = JSON.parse(line);
      const tally = counts.get(current) ?? { total: 0, '2xx': 0, '3xx': 0, '4xx': 0, '5xx': 0 };
      tally.total += 1;
      tally[`${Math.floor(status / 100)}xx`] += 1;
      counts.set(current, tally);
      if (status >= 500) log.write(`${line}\n`);
    }
  });
  portal.stderr.pipe(log);
  const exited = new Promise((done) => portal.once('exit', done));
  const stopPortal = async () => {
    if (portal.exitCode === null && portal.signalCode === null) {
      portal.kill('SIGTERM');
      const timer = setTimeout(() => portal.kill('SIGKILL'), 15_000);
      await exited;
      clearTimeout(timer);
    }
    rmSync(workDir, { recursive: true, force: true });
  };
  for (const signal of ['SIGINT', 'SIGTERM']) {
    process.once(signal, () => {
      void stopPortal().finally(() => process.exit(130));
    });
  }

  const started = Date.now();
  const results = [];
  try {
    await waitUntilReady(baseUrl, portal);
    const state = { participant: PARTICIPANT, admin: ADMIN, generation: 0 };
    await registerParticipant(baseUrl, state.participant);
    console.log(`portal at ${baseUrl} (data in ${dataDir}); seed ${seed}, ${maxExamples} examples per operation`);
    for (const name of runs) {
      if (!['anonymous', 'participant', 'admin'].includes(name))
        throw new Error(`unknown run ${name}: use anonymous, participant or admin`);
      const configFile = writeConfig(workDir, name, await seedPortal(baseUrl, state));
      const account = { anonymous: null, participant: state.participant, admin: state.admin }[name];
      const stateFile = join(workDir, `${name}.state.json`);
      current = name;
      results.push(await runSchemathesis(name, baseUrl, account, configFile, stateFile));
      // The administrator may have renamed their own account during the run (hooks.py says so).
      if (name === 'admin' && existsSync(stateFile)) {
        state.admin = { ...state.admin, username: JSON.parse(readFileSync(stateFile, 'utf8')).username };
      }
      current = 'setup';
      if (portal.exitCode !== null) throw new Error(`the portal exited with code ${portal.exitCode} during the ${name} run`);
    }
  } finally {
    await stopPortal();
  }
  console.log(`\nAPI fuzzing: ${((Date.now() - started) / 1000).toFixed(0)} s, seed ${seed}`);
  for (const result of results) {
    const tally = counts.get(result.name);
    const requests = tally
      ? `${tally.total} requests: ${['2xx', '3xx', '4xx', '5xx'].map((kind) => `${tally[kind]} ${kind}`).join(', ')}`
      : 'no requests';
    console.log(`${result.code === 0 ? 'passed' : 'FAILED'}  ${result.name} (${result.seconds.toFixed(0)} s, ${requests})`);
  }
  console.log(`reports and the portal's log: ${reportDir}`);
  return results.every((result) => result.code === 0) ? 0 : 1;
}

main().then(
  (code) => {
    process.exitCode = code;
  },
  (error) => {
    console.error(error);
    process.exitCode = 1;
  },
);
