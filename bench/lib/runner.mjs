// What every bench needs around its measurement: options, the services it starts as child
// processes (and their certain end, whatever way the bench ends), a temporary folder, the
// watchdog, the machine's description and the JSON result in bench/results/.
//
// One bench per process: the state here (children, temporary folder, failure) is the run's.
import { execFileSync, spawn } from 'node:child_process';
import {
  closeSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  openSync,
  readFileSync,
  readdirSync,
  renameSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { cpus, loadavg, platform, release, tmpdir, totalmem } from 'node:os';
import { join, relative } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';

export const ROOT = fileURLToPath(new URL('../../', import.meta.url));
export const RESULTS_DIR = join(ROOT, 'bench', 'results');
export const HOST = '127.0.0.1';
const GUARD = join(ROOT, 'bench', 'lib', 'child-guard.mjs');

/** Bad options or a missing build: exit code 2, no stack. */
export class UsageError extends Error {}
/** Ctrl-C or SIGTERM: exit code 130. */
export class Interrupted extends Error {}

// --- options -----------------------------------------------------------------------------------

/** parseArgs with the bench's help text; bad options become a UsageError. */
export function parseOptions(options, help) {
  let parsed;
  try {
    parsed = parseArgs({ options: { ...options, help: { type: 'boolean', short: 'h' } }, strict: true });
  } catch (error) {
    throw new UsageError(`${error.message} (see --help)`);
  }
  if (parsed.values.help) {
    console.log(help);
    process.exit(0);
  }
  return parsed.values;
}

/** A whole number option within bounds (from the command line, else the environment, else the default). */
export function intOption(name, raw, fallback, min, max) {
  const value = raw === undefined || raw === '' ? fallback : Number(raw);
  if (!Number.isInteger(value) || value < min || value > max) {
    throw new UsageError(`--${name} must be a whole number from ${min} to ${max} (got ${raw})`);
  }
  return value;
}

/** True for 1/true/yes in an environment variable. */
export function envFlag(value) {
  return ['1', 'true', 'yes'].includes(value ?? '');
}

/** Stops with a clear message when a file the bench runs is not built. */
export function checkBuilt(files) {
  const missing = files.filter((file) => !existsSync(join(ROOT, file)));
  if (missing.length > 0) {
    throw new UsageError(
      `The services are not built (missing ${missing.join(', ')}).\nRun \`npm run build\` (or \`npx tsc -b\`) in ${ROOT} first.`,
    );
  }
}

// --- the run's failure, temporary folder and watchdog -----------------------------------------

let rejectRun;
/** Rejects when anything goes wrong outside the awaited path (a child died, a signal, the watchdog). */
export const failure = new Promise((_resolve, reject) => {
  rejectRun = reject;
});
failure.catch(() => {});
export function fail(error) {
  rejectRun(error);
}
/** Awaits a promise, or the run's failure if that comes first. */
export function orFail(promise) {
  return Promise.race([promise, failure]);
}

let tempDir;
/** The run's temporary folder (removed at the end, whatever happens). */
export function makeTempDir(prefix) {
  tempDir = mkdtempSync(join(tmpdir(), prefix));
  return tempDir;
}
/** Leaves the run's temporary folder in place (a bench's --keep); answers its path. */
export function keepTempDir() {
  const kept = tempDir;
  tempDir = undefined;
  return kept;
}

/** Fails the run when it takes longer than its budget. */
export function startWatchdog(budgetS) {
  const timer = setTimeout(() => fail(new Error(`the run took longer than its budget of ${Math.round(budgetS)} s`)), budgetS * 1000);
  timer.unref();
  return () => clearTimeout(timer);
}

// --- child processes ---------------------------------------------------------------------------

/** Every process this bench started, until it has exited. */
export const children = new Set();
let stopping = false;
let running = false;
const stopHooks = new Set();
/** Something to stop first when the run ends (a load generator in flight); returns its remover. */
export function onStop(hook) {
  stopHooks.add(hook);
  return () => stopHooks.delete(hook);
}

/**
 * Starts a Node script (relative to the repository) as a child process. Its output goes to a log
 * file (not through this process, which must stay free for the load generator); stdin is a pipe
 * that bench/lib/child-guard.mjs watches, so the child stops when the bench goes away. With
 * `ipc`, the child also gets a message channel (child.send / process.on('message')).
 */
export function startChild(name, script, env, { profileDir, nodeArgs = [], ipc = false } = {}) {
  if (!tempDir) throw new Error('makeTempDir first');
  const logFile = join(tempDir, `${name}.log`);
  const log = openSync(logFile, 'a');
  const args = ['--import', pathToFileURL(GUARD).href, ...nodeArgs];
  // Node's own file names (CPU.<date>.<time>.<pid>.<thread>.<seq>.cpuprofile): with a fixed
  // --cpu-prof-name, a worker thread's profile (ffprobe is started from one) would overwrite the
  // main thread's. Renamed to <name>.cpuprofile (main thread) and <name>.thread-<n>.cpuprofile once the child has exited.
  if (profileDir) args.push('--cpu-prof', `--cpu-prof-dir=${profileDir}`);
  args.push(join(ROOT, script));
  const child = spawn(process.execPath, args, {
    cwd: ROOT,
    env: { ...process.env, NODE_ENV: 'production', LOG_LEVEL: process.env.BENCH_LOG_LEVEL ?? 'info', ...env },
    stdio: ipc ? ['pipe', log, log, 'ipc'] : ['pipe', log, log],
    detached: true, // its own process group: Ctrl-C reaches the bench, which stops the children in order
  });
  closeSync(log);
  const entry = { name, child, logFile, exited: null };
  entry.exited = new Promise((resolve) => child.once('exit', (code, signal) => resolve({ code, signal })));
  if (profileDir) entry.exited = entry.exited.then((exit) => (nameProfiles(profileDir, name, child.pid), exit));
  children.add(entry);
  void entry.exited.then(({ code, signal }) => {
    children.delete(entry);
    if (!stopping && !entry.stopped)
      fail(new Error(`${name} exited unexpectedly (code ${code}, signal ${signal}); its log:\n${tail(logFile)}`));
  });
  child.stdin.on('error', () => {});
  return entry;
}

/** Gives the CPU profiles a child wrote under Node's default names the child's name (see startChild). */
function nameProfiles(profileDir, name, pid) {
  for (const file of readdirSync(profileDir)) {
    const match = /^CPU\.\d+\.\d+\.(\d+)\.(\d+)\.\d+\.cpuprofile$/.exec(file);
    if (!match || Number(match[1]) !== pid) continue;
    renameSync(join(profileDir, file), join(profileDir, match[2] === '0' ? `${name}.cpuprofile` : `${name}.thread-${match[2]}.cpuprofile`));
  }
}

/**
 * Starts a program that is not a Node script (a baseline server in another language) as a child
 * process, logged and stopped like startChild's. It cannot watch its stdin as child-guard does, so
 * where util-linux's setpriv is available it is started through it with a parent-death signal:
 * the kernel sends it SIGTERM when the bench goes away, even by SIGKILL. setpriv replaces itself
 * with the program, so the child's pid is the program's own (for the CPU and memory readings).
 */
export function startProgram(name, file, args, env = {}) {
  if (!tempDir) throw new Error('makeTempDir first');
  const logFile = join(tempDir, `${name}.log`);
  const log = openSync(logFile, 'a');
  const setpriv = ['/usr/bin/setpriv', '/bin/setpriv'].find((path) => existsSync(path));
  const [command, argv] = setpriv ? [setpriv, ['--pdeathsig', 'SIGTERM', file, ...args]] : [file, args];
  const child = spawn(command, argv, { cwd: tempDir, env: { ...process.env, ...env }, stdio: ['pipe', log, log], detached: true });
  closeSync(log);
  const entry = { name, child, logFile, exited: null };
  entry.exited = new Promise((resolve) => child.once('exit', (code, signal) => resolve({ code, signal })));
  children.add(entry);
  void entry.exited.then(({ code, signal }) => {
    children.delete(entry);
    if (!stopping && !entry.stopped)
      fail(new Error(`${name} exited unexpectedly (code ${code}, signal ${signal}); its log:\n${tail(logFile)}`));
  });
  child.on('error', (error) => fail(new Error(`${name} could not be started (${file}): ${error.message}`)));
  child.stdin.on('error', () => {});
  return entry;
}

export function tail(file, lines = 25) {
  try {
    return readFileSync(file, 'utf8')
      .trimEnd()
      .split('\n')
      .slice(-lines)
      .map((line) => `    ${line}`)
      .join('\n');
  } catch {
    return '    (no log)';
  }
}

/** SIGTERM to one child (SIGKILL after 8 s); resolves when it has exited. */
export async function stopChild(entry) {
  entry.stopped = true;
  try {
    entry.child.kill('SIGTERM');
  } catch {
    // already gone
  }
  const timer = setTimeout(() => {
    try {
      entry.child.kill('SIGKILL');
    } catch {
      // already gone
    }
  }, 8000);
  await entry.exited;
  clearTimeout(timer);
}

export async function stopChildren() {
  stopping = true;
  for (const hook of stopHooks) hook();
  await Promise.all([...children].map((entry) => stopChild(entry)));
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

for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP']) {
  process.on(signal, () => {
    // A second signal, or a script that imports this module without runBench: stop now.
    if (stopping || !running) process.exit(130);
    console.error(`\n${signal}: stopping the services...`);
    fail(new Interrupted(`interrupted by ${signal}`));
  });
}

/**
 * Runs a bench's main function: usage errors and interruptions get a short message, failures the
 * last lines of each service's log; the services and the temporary folder go away in every case.
 */
export async function runBench(name, main) {
  running = true;
  try {
    await orFail(main());
  } catch (error) {
    const plain = error instanceof UsageError || error instanceof Interrupted;
    process.exitCode = error instanceof UsageError ? 2 : error instanceof Interrupted ? 130 : 1;
    console.error(`\n${plain ? '' : `${name} bench failed: `}${error.message}`);
    if (!plain) {
      for (const { name: child, logFile } of children) console.error(`\n  last lines of ${child}'s log:\n${tail(logFile, 10)}`);
    }
  } finally {
    await stopChildren();
    if (tempDir) rmSync(tempDir, { recursive: true, force: true });
    tempDir = undefined;
    // Nothing else should keep the process alive; make sure of it (open sockets of fetch etc.).
    setTimeout(() => process.exit(), 500).unref();
  }
}

// --- describing the run ------------------------------------------------------------------------

export function machineInfo() {
  return {
    cpus: cpus().length,
    cpuModel: cpus()[0]?.model ?? 'unknown',
    memoryGiB: Math.round((totalmem() / 2 ** 30) * 10) / 10,
    platform: `${platform()} ${release()}`,
    node: process.version,
    loadAverageAtStart: loadavg().map((v) => Math.round(v * 100) / 100),
  };
}

/**
 * The machine as bench/image, bench/transcode and bench/web describe it in their results (other
 * field names than machineInfo, kept so that their results stay comparable), with ffmpeg's version.
 */
export function machineSummary() {
  const info = machineInfo();
  let ffmpegVersion = null;
  try {
    ffmpegVersion = execFileSync(process.env.FFMPEG_PATH ?? 'ffmpeg', ['-version'], {
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'ignore'],
    }).split('\n')[0];
  } catch {
    // reported as null
  }
  return {
    cores: info.cpus,
    cpu: info.cpuModel,
    memoryGb: Math.round(totalmem() / 2 ** 30),
    node: info.node,
    loadAverageAtStart: info.loadAverageAtStart,
    ffmpeg: ffmpegVersion,
  };
}

export function describeMachine(name, machine) {
  return `${name} bench: ${machine.cpus} cores (${machine.cpuModel}), node ${machine.node}, load average ${machine.loadAverageAtStart.join(' ')}`;
}

/** The commit measured (of this checkout, or of another `tree`), and whether the folders it measures (`paths`) had uncommitted changes. */
export function gitDescribe(paths = ['services/', 'packages/'], tree = ROOT) {
  try {
    const head = execFileSync('git', ['rev-parse', '--short', 'HEAD'], {
      cwd: tree,
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'ignore'],
    }).trim();
    const dirty = execFileSync('git', ['status', '--porcelain', '--', ...paths], {
      cwd: tree,
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'ignore'],
    }).trim();
    return dirty ? `${head} (with uncommitted changes in ${paths.join(' or ')})` : head;
  } catch {
    return 'unknown';
  }
}

/** A timestamp for file names. */
export function stampOf(date) {
  return date.toISOString().replace(/[:.]/g, '-');
}

/** Writes bench/results/<name>-<stamp>.json; answers its path. */
export function saveResult(name, stamp, report) {
  mkdirSync(RESULTS_DIR, { recursive: true });
  const file = join(RESULTS_DIR, `${name}-${stamp}.json`);
  writeFileSync(file, `${JSON.stringify(report, null, 2)}\n`);
  return file;
}

/** Writes bench/results/<name>-<stamp>.json and says where. */
export function writeResult(name, stamp, report) {
  const file = saveResult(name, stamp, report);
  console.log(`\nresult written to ${relative(ROOT, file)}`);
  return file;
}

/** Prints rows under a header, the first column left-aligned, the others right-aligned. */
export function printTable(header, rows) {
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((row) => String(row[i]).length)));
  const line = (cells) => `  ${cells.map((c, i) => (i === 0 ? String(c).padEnd(widths[i]) : String(c).padStart(widths[i]))).join('  ')}`;
  console.log('');
  console.log(line(header));
  console.log(line(widths.map((w) => '-'.repeat(w))));
  for (const row of rows) console.log(line(row));
  console.log('');
}
