// Shared by bench/image and bench/transcode: the two child processes (the worker and the bare
// baseline), interleaved rounds, medians, the results file.
import { execFileSync, fork } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, openSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { cpus, loadavg, totalmem } from 'node:os';
import { join } from 'node:path';

export const ROOT = new URL('../..', import.meta.url).pathname;
export const RESULTS_DIR = join(ROOT, 'bench', 'results');

/** The bench runs the built worker, like production; it builds nothing itself. */
export function assertBuilt() {
  for (const file of ['packages/platform/dist/index.js', 'services/media-worker/dist/media-job-handler.js']) {
    if (!existsSync(join(ROOT, file))) {
      console.error(`${file} is missing: build first (npm run build, or npx tsc -b).`);
      process.exit(1);
    }
  }
}

/**
 * A child process answering { id, op, ... } messages over IPC. Its stdout and stderr go to
 * `logFile`. The child is told to exit at the end, and killed if it has not after 5 s.
 */
export async function startChild(script, { env = {}, logFile }) {
  const log = openSync(logFile, 'a');
  const child = fork(join(ROOT, 'bench', 'media', script), [], {
    env: { ...process.env, ...env },
    stdio: ['ignore', log, log, 'ipc'],
  });
  const pending = new Map();
  let nextId = 1;
  let failure;
  const ready = new Promise((resolve, reject) => {
    child.on('message', (message) => {
      if (message.ready) return resolve();
      const waiter = pending.get(message.id);
      if (!waiter) return;
      pending.delete(message.id);
      if (message.ok) waiter.resolve(message);
      else waiter.reject(new Error(`${script}: ${message.error}`));
    });
    child.once('exit', (code, signal) => {
      failure = new Error(`${script} exited (${signal ?? code}); its log: ${logFile}\n${tail(logFile)}`);
      reject(failure);
      for (const waiter of pending.values()) waiter.reject(failure);
      pending.clear();
    });
  });
  await ready;
  return {
    pid: child.pid,
    call(message) {
      if (failure) return Promise.reject(failure);
      const id = nextId++;
      return new Promise((resolve, reject) => {
        pending.set(id, { resolve, reject });
        child.send({ ...message, id });
      });
    },
    async stop() {
      if (child.exitCode !== null || child.signalCode !== null) return;
      const exited = new Promise((resolve) => child.once('exit', resolve));
      child.send({ op: 'exit', id: 0 });
      const timer = setTimeout(() => child.kill('SIGKILL'), 5000);
      await exited;
      clearTimeout(timer);
    },
  };
}

/**
 * The worker harness (its data and work folders in `dir`), the bare baseline, and with
 * `compareWorker` (the dist folder of another build) a second worker harness running that build.
 * Each is added to `children` as it starts, so that a failure further on still stops it.
 */
export async function startHarnesses({ dir, workRoot = join(dir, 'work'), compareWorker, children }) {
  const logLevel = process.env.BENCH_LOG_LEVEL ?? 'info';
  const worker = await startChild('worker-harness.mjs', {
    env: { DATA_DIR: join(dir, 'data'), MEDIA_WORK_ROOT: workRoot, LOG_LEVEL: logLevel },
    logFile: join(dir, 'worker.log'),
  });
  children.push(worker);
  const bare = await startChild('bare-harness.mjs', { logFile: join(dir, 'bare.log') });
  children.push(bare);
  let compare;
  if (compareWorker) {
    compare = await startChild('worker-harness.mjs', {
      env: { DATA_DIR: join(dir, 'data-compare'), MEDIA_WORK_ROOT: join(dir, 'work-compare'), WORKER_DIST: compareWorker, LOG_LEVEL: logLevel },
      logFile: join(dir, 'worker-compare.log'),
    });
    children.push(compare);
  }
  return { worker, bare, compare };
}

let copies = 0;

/**
 * Runs `use(folder)` on a fresh copy of `file`, named `name`, in a folder of its own under `dir`
 * (removed afterwards): the bare baseline gets its own copy each time, as the worker gets its own
 * copy of the original from the blob store.
 */
export async function withOwnCopy(dir, file, name, use) {
  const own = join(dir, `bare-${++copies}`);
  mkdirSync(own);
  copyFileSync(file, join(own, name));
  try {
    return await use(own);
  } finally {
    rmSync(own, { recursive: true, force: true });
  }
}

function tail(file) {
  try {
    return readFileSync(file, 'utf8').split('\n').slice(-15).join('\n');
  } catch {
    return '';
  }
}

export function median(values) {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2;
}

/**
 * CPU of the whole machine between two calls (from /proc/stat), and the part of it that was not
 * the measured process (`pid`, with its threads and the children it waited for, e.g. ffmpeg):
 * `other` is what the rest of the machine did meanwhile, as a share of all cores.
 */
export function machineCpu(pid) {
  const clockTicks = () => {
    const fields = readFileSync('/proc/stat', 'utf8').split('\n')[0].trim().split(/\s+/).slice(1).map(Number);
    const idle = fields[3] + (fields[4] ?? 0);
    const total = fields.reduce((sum, value) => sum + value, 0);
    return { idle, total };
  };
  const processTicks = () => {
    try {
      const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ').map(Number);
      return fields[11] + fields[12] + fields[13] + fields[14]; // utime stime cutime cstime
    } catch {
      return 0;
    }
  };
  const before = clockTicks();
  const ownBefore = processTicks();
  return () => {
    const after = clockTicks();
    const total = after.total - before.total;
    if (total <= 0) return { busy: 0, other: 0, measured: 0 };
    const busyTicks = total - (after.idle - before.idle);
    const own = Math.max(0, processTicks() - ownBefore);
    return { busy: busyTicks / total, measured: own / total, other: Math.max(0, busyTicks - own) / total };
  };
}

export function machine() {
  let ffmpegVersion = null;
  try {
    ffmpegVersion = execFileSync(process.env.FFMPEG_PATH ?? 'ffmpeg', ['-version'], { encoding: 'utf8' }).split('\n')[0];
  } catch {
    // reported as null
  }
  return {
    cores: cpus().length,
    cpu: cpus()[0]?.model,
    memoryGb: Math.round(totalmem() / 2 ** 30),
    node: process.version,
    loadAverageAtStart: loadavg(),
    ffmpeg: ffmpegVersion,
  };
}

export function gitDescribe() {
  try {
    const head = execFileSync('git', ['rev-parse', '--short', 'HEAD'], { cwd: ROOT, encoding: 'utf8' }).trim();
    const dirty = execFileSync('git', ['status', '--porcelain', '--', 'services/media-worker', 'packages/platform'], { cwd: ROOT, encoding: 'utf8' }).trim();
    return dirty ? `${head} (with uncommitted changes in services/media-worker or packages/platform)` : head;
  } catch {
    return null;
  }
}

export function writeResults(name, report) {
  mkdirSync(RESULTS_DIR, { recursive: true });
  const file = join(RESULTS_DIR, `${name}-${new Date().toISOString().replace(/[:.]/g, '-')}.json`);
  writeFileSync(file, `${JSON.stringify(report, null, 2)}\n`);
  return file;
}

export const fmt = (seconds) => seconds.toFixed(seconds < 10 ? 3 : 2);

/**
 * Runs `rounds` rounds of every target, in a rotating order (round 1: a b c, round 2: b c a, ...),
 * so that none always runs first or right after another. Each target's `run()` returns at least
 * { seconds }; the CPU of the machine during it is added (see machineCpu).
 */
export async function interleavedRounds(rounds, targets, onRow) {
  const keys = Object.keys(targets);
  const rows = [];
  for (let round = 1; round <= rounds; round++) {
    const row = { round };
    const shift = (round - 1) % keys.length;
    for (const key of [...keys.slice(shift), ...keys.slice(0, shift)]) {
      const cpu = machineCpu(targets[key].pid());
      const outcome = await targets[key].run();
      row[key] = outcome.seconds;
      row[`${key}Cpu`] = cpu();
      row[`${key}Detail`] = outcome.detail;
    }
    rows.push(row);
    onRow?.(row);
  }
  return rows;
}

/** Medians and ratios against `baseKey`, and the worst "other CPU" seen. */
export function summarize(rows, keys, baseKey) {
  const medians = Object.fromEntries(keys.map((key) => [key, median(rows.map((row) => row[key]))]));
  const ratios = Object.fromEntries(keys.filter((key) => key !== baseKey).map((key) => [key, medians[key] / medians[baseKey]]));
  const ratiosOfRounds = Object.fromEntries(
    keys.filter((key) => key !== baseKey).map((key) => [key, median(rows.map((row) => row[key] / row[baseKey]))]),
  );
  const otherCpuMax = Math.max(...rows.flatMap((row) => keys.map((key) => row[`${key}Cpu`].other)));
  return { medians, ratios, ratiosOfRounds, otherCpuMax };
}

export const pct = (share) => `${Math.round(share * 100)}%`;

/** Ends the bench (exit 2) if it runs past its budget, so a hung ffmpeg never blocks a machine. */
export function exitAfter(name, minutes) {
  const timer = setTimeout(() => {
    console.error(`bench:${name}: watchdog (${minutes} min) expired, stopping`);
    process.exit(2);
  }, minutes * 60_000);
  timer.unref();
  return timer;
}
