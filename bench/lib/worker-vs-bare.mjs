// bench/image and bench/transcode: the same media work done by the media worker and by a bare
// script, in two child processes answering the bench over IPC (bench/media/worker-harness.mjs and
// bench/media/bare-harness.mjs), measured in interleaved rounds; medians and ratios.
import { copyFileSync, mkdirSync, rmSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { machineCpu, median, percentCell } from './measure.mjs';
import { checkBuilt, keepTempDir, makeTempDir, orFail, parseOptions, runBench, startChild, startWatchdog } from './runner.mjs';

/** What these benches run: the built worker, like production; they build nothing themselves. */
export const MEDIA_BUILT = ['packages/platform/dist/index.js', 'services/media-worker/dist/media-job-handler.js'];

/**
 * Runs bench/image or bench/transcode: its options (with the shared --label, --compare-worker and
 * --keep), the build check, the temporary folder (left in place with --keep), the watchdog;
 * `measure(values, dir)` does the rest.
 */
export async function runWorkerVsBare(name, { help, options, budgetMinutes }, measure) {
  await runBench(name, async () => {
    const values = parseOptions(
      {
        ...options,
        label: { type: 'string', default: '' },
        'compare-worker': { type: 'string', default: '' },
        keep: { type: 'boolean', default: false },
      },
      help,
    );
    checkBuilt(MEDIA_BUILT);
    const dir = makeTempDir(`portal-bench-${name}-`);
    startWatchdog(budgetMinutes * 60);
    try {
      await measure(values, dir);
    } finally {
      if (values.keep) console.log(`kept: ${keepTempDir()}`);
    }
  });
}

/**
 * A child process (bench/lib/runner.mjs startChild, with a message channel) answering
 * { id, op, ... } messages; resolves once the child says it is ready.
 */
async function startHarness(name, script, env) {
  const entry = startChild(name, script, env, { ipc: true });
  const { child } = entry;
  const pending = new Map();
  let nextId = 1;
  let gone;
  const ready = new Promise((resolveReady) => {
    child.on('message', (message) => {
      if (message.ready) return resolveReady();
      const waiter = pending.get(message.id);
      if (!waiter) return;
      pending.delete(message.id);
      if (message.ok) waiter.resolve(message);
      else waiter.reject(new Error(`${name}: ${message.error}`));
    });
  });
  void entry.exited.then(({ code, signal }) => {
    gone = new Error(`${name} exited (${signal ?? code}); its log: ${entry.logFile}`);
    for (const waiter of pending.values()) waiter.reject(gone);
    pending.clear();
  });
  // A child that dies before it is ready fails the run (runner.mjs), and with it this wait.
  await orFail(ready);
  return {
    pid: child.pid,
    call(message) {
      if (gone) return Promise.reject(gone);
      const id = nextId++;
      return new Promise((resolveCall, reject) => {
        pending.set(id, { resolve: resolveCall, reject });
        child.send({ ...message, id });
      });
    },
  };
}

/**
 * The worker harness (its data and work folders in `dir`), the bare baseline, and with
 * `compareWorker` (the dist folder of another build) a second worker harness running that build.
 * They are the run's children: they stop when the bench ends, whichever way (runner.mjs).
 */
export async function startHarnesses({ dir, workRoot = join(dir, 'work'), compareWorker }) {
  const worker = await startHarness('worker', 'bench/media/worker-harness.mjs', { DATA_DIR: join(dir, 'data'), MEDIA_WORK_ROOT: workRoot });
  const bare = await startHarness('bare', 'bench/media/bare-harness.mjs', {});
  const compare = compareWorker
    ? await startHarness('worker-compare', 'bench/media/worker-harness.mjs', {
        DATA_DIR: join(dir, 'data-compare'),
        MEDIA_WORK_ROOT: join(dir, 'work-compare'),
        WORKER_DIST: resolve(compareWorker),
      })
    : undefined;
  return { worker, bare, compare };
}

/**
 * The targets of interleavedRounds: the worker (and the compare build) running `job` on
 * `job.file`, and the bare harness running `bareWork(bare, folder)` on a copy of that file named
 * `copyName` in a folder of its own (see withOwnCopy).
 */
export function workerAndBare({ worker, compare, bare }, job, { dir, copyName, bareWork }) {
  return {
    worker: workerTarget(worker, job),
    ...(compare ? { compare: workerTarget(compare, job) } : {}),
    bare: {
      pid: () => bare.pid,
      run: () => withOwnCopy(dir, job.file, copyName, async (own) => ({ seconds: (await bareWork(bare, own)).seconds })),
    },
  };
}

/**
 * A target of interleavedRounds: one job of the worker harness `child` on `file`. `detail(answer)`
 * picks what the round keeps of the worker's answer beside its seconds.
 */
function workerTarget(child, { file, mediaType, what, detail }) {
  return {
    pid: () => child.pid,
    run: async () => {
      const answer = await child.call({ op: 'job', file, mediaType });
      if (answer.result.status !== 'ready') throw new Error(`the worker did not process the ${what}: ${answer.result.error}`);
      return { seconds: answer.seconds, detail: detail(answer) };
    },
  };
}

let copies = 0;

/**
 * Runs `use(folder)` on a fresh copy of `file`, named `name`, in a folder of its own under `dir`
 * (removed afterwards): the bare baseline gets its own copy each time, as the worker gets its own
 * copy of the original from the blob store.
 */
async function withOwnCopy(dir, file, name, use) {
  const own = join(dir, `bare-${++copies}`);
  mkdirSync(own);
  copyFileSync(file, join(own, name));
  try {
    return await use(own);
  } finally {
    rmSync(own, { recursive: true, force: true });
  }
}

/** Seconds as the media benches print them. */
export const fmt = (seconds) => seconds.toFixed(seconds < 10 ? 3 : 2);

/**
 * Runs `rounds` rounds of every target, in a rotating order (round 1: a b c, round 2: b c a, ...),
 * so that none always runs first or right after another. Each target's `run()` returns at least
 * { seconds }; the CPU of the machine during it is added (see machineCpu). Each row is printed.
 */
export async function interleavedRounds(rounds, targets) {
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
    console.log(
      `  round ${String(row.round).padStart(2)}  ${keys.map((key) => `${key} ${fmt(row[key])} s`).join('  ')}${row.worker !== undefined && row.bare !== undefined ? `  worker/bare ${(row.worker / row.bare).toFixed(3)}` : ''}  CPU other ${keys.map((key) => percentCell(row[`${key}Cpu`].other)).join(' / ')}`,
    );
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
