import { Worker } from 'node:worker_threads';

/**
 * Runs a program from a worker thread instead of the event loop's thread, answering its stdout.
 *
 * Starting a process blocks the calling thread: libuv forks the (large) server process and waits
 * until the child has exec'd. On a busy machine that took 5-10 ms per start in the evidence
 * service, which probes every recording and video with ffprobe as it files it; with dozens of
 * uploads finishing per second those waits were the largest single share of the event loop's time
 * (bench/festival). From a worker thread the wait holds only that thread.
 *
 * One worker per process, started on first use, kept while anything is pending (unref'd
 * otherwise, so it never keeps a process alive), started again if it dies (pending calls fail).
 * The worker's code is inline (eval) so that it runs the same from TypeScript sources and builds.
 */
const WORKER_CODE = `
const { parentPort } = require('node:worker_threads');
const { execFile } = require('node:child_process');
parentPort.on('message', ({ id, file, args, options }) => {
  execFile(file, args, { ...options, encoding: 'utf8' }, (error, stdout, stderr) => {
    parentPort.postMessage(error
      ? { id, error: { message: error.message, code: error.code ?? null, signal: error.signal ?? null, killed: Boolean(error.killed), stderr: String(stderr ?? '') } }
      : { id, stdout });
  });
});
`;

interface Pending {
  resolve: (stdout: string) => void;
  reject: (error: Error) => void;
}

type Reply =
  | { id: number; stdout: string }
  | { id: number; error: { message: string; code: string | number | null; signal: string | null; killed: boolean; stderr: string } };

let worker: Worker | undefined;
let nextId = 0;
const pending = new Map<number, Pending>();

function failAll(error: Error): void {
  for (const call of pending.values()) call.reject(error);
  pending.clear();
}

function theWorker(): Worker {
  if (worker) return worker;
  const started = new Worker(WORKER_CODE, { eval: true });
  started.on('message', (reply: Reply) => {
    const call = pending.get(reply.id);
    if (!call) return;
    pending.delete(reply.id);
    if (pending.size === 0) started.unref();
    if ('error' in reply) call.reject(Object.assign(new Error(reply.error.message), reply.error));
    else call.resolve(reply.stdout);
  });
  const gone = (error: Error) => {
    if (worker === started) worker = undefined;
    failAll(error);
  };
  started.on('error', gone);
  started.on('exit', (code) => gone(new Error(`the process runner thread stopped (exit code ${code})`)));
  started.unref();
  worker = started;
  return started;
}

/** Like execFile (utf8 output), run from a worker thread. Rejects as execFile does (code, signal, killed, stderr). */
export function execFileOffThread(
  file: string,
  args: readonly string[],
  options: { timeout?: number; maxBuffer?: number } = {},
): Promise<string> {
  return new Promise((resolve, reject) => {
    const id = nextId++;
    const runner = theWorker();
    pending.set(id, { resolve, reject });
    runner.ref();
    runner.postMessage({ id, file, args: [...args], options });
  });
}
