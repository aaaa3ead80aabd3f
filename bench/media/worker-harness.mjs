// Child process of bench/image and bench/transcode: the media worker as it runs in production,
// minus the queue's polling. The job handler (services/media-worker/dist/media-job-handler.js)
// wrapped in its job metrics, on the adapters main.ts picks from the environment (DATA_DIR set by
// the bench: FsBlobStore for blobs, the SQLite event bus), logging JSON lines at LOG_LEVEL to
// stdout (a file of the bench). Each job: the original is stored in the blob store (not timed: it
// is the upload's work), then the handler runs and is timed: it fetches the original from the
// blob store, processes it, stores the derivatives and publishes the result event.
//
// Every process the handler starts is recorded (spawn is observed, not replaced) so the bench
// can show what the worker ran and run the same ffmpeg command alone.
import childProcess from 'node:child_process';
import { createReadStream } from 'node:fs';
import { syncBuiltinESMExports } from 'node:module';
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { promisify } from 'node:util';

const spawned = [];
const realSpawn = childProcess.spawn;
childProcess.spawn = function recordedSpawn(command, args, ...rest) {
  const started = performance.now();
  const child = realSpawn.call(this, command, args, ...rest);
  const entry = { command, args: Array.isArray(args) ? [...args] : [], startedMs: started, seconds: null };
  spawned.push(entry);
  child.once('exit', () => {
    entry.seconds = (performance.now() - started) / 1000;
  });
  return child;
};
// execFile (ffprobe in @portal/platform) does not go through the exported spawn: record it too.
// util.promisify(execFile) uses execFile's own promise form, so that one is recorded as well.
const record = (command, args, child) => {
  const entry = { command, args: Array.isArray(args) ? [...args] : [], startedMs: performance.now(), seconds: null };
  spawned.push(entry);
  child.once('exit', () => {
    entry.seconds = (performance.now() - entry.startedMs) / 1000;
  });
};
const realExecFile = childProcess.execFile;
const realExecFilePromise = realExecFile[promisify.custom];
function recordedExecFile(command, args, ...rest) {
  const child = realExecFile.call(this, command, args, ...rest);
  record(command, args, child);
  return child;
}
recordedExecFile[promisify.custom] = (command, args, ...rest) => {
  const promise = realExecFilePromise(command, args, ...rest);
  record(command, args, promise.child);
  return promise;
};
childProcess.execFile = recordedExecFile;
syncBuiltinESMExports();

// Loaded after the hook: fluent-ffmpeg keeps a reference to spawn when it loads.
const platform = await import('../../packages/platform/dist/index.js');
// WORKER_DIST: another build of the worker to compare (the bench's --compare-worker).
const workerDist = process.env.WORKER_DIST
  ? pathToFileURL(`${resolve(process.env.WORKER_DIST)}/`)
  : new URL('../../services/media-worker/dist/', import.meta.url);
const { mediaJobHandler } = await import(new URL('media-job-handler.js', workerDist).href);

const logger = platform.createLogger({ service: 'media-worker' });
const infrastructure = platform.infrastructureFromEnv();
const bus = platform.createEventBus(infrastructure, 'media-worker', logger);
const blobs = platform.createBlobStore(infrastructure);
const metrics = new platform.ServiceMetrics('media-worker');
const workRoot = process.env.MEDIA_WORK_ROOT;
if (!workRoot) throw new Error('MEDIA_WORK_ROOT is not set');
const handle = metrics.timeJobs('media', mediaJobHandler({ blobs, bus, logger, workRoot }));
// MEDIA_TRANSCODE_POLICY=playable-first (bench/transcode's phone case): the 720p jobs the first
// job adds go to a real embedded queue in DATA_DIR, which nothing works; the harness runs each
// one itself right after, timed on its own.
const transcodeQueue = new platform.SqliteJobQueue({ file: `${process.env.DATA_DIR}/jobs.sqlite`, queue: 'media-av-720p', logger });
let playableFirst;
const handlerFor = (policy) => {
  if (policy !== 'playable-first') return handle;
  playableFirst ??= metrics.timeJobs(
    'media',
    mediaJobHandler({ blobs, bus, logger, workRoot, transcodePolicy: 'playable-first', transcodeQueue }),
  );
  return playableFirst;
};

/** Where the display copies of a job are on disk (FsBlobStore under DATA_DIR), for the bench to inspect. */
function outputsOf(...results) {
  return results.filter((result) => result?.display).map((result) => `${process.env.DATA_DIR}/blobs/data/${result.display.key}`);
}

let jobs = 0;
process.on('message', async (message) => {
  try {
    if (message.op === 'job') {
      jobs++;
      const id = `bench-${jobs}`;
      const originalKey = `evidence/${id}/r1/original`;
      await blobs.put(originalKey, createReadStream(message.file), { contentType: 'application/octet-stream' });
      spawned.length = 0;
      const progress = [];
      const job = {
        id: `${id}.r1`,
        name: 'process-media',
        attemptsMade: 0,
        data: { evidenceId: id, revision: 1, media_type: message.mediaType, originalKey, outputPrefix: `evidence/${id}/r1/` },
        updateProgress: async (value) => void progress.push(value),
      };
      const start = performance.now();
      const result = await handlerFor(message.policy)(job);
      const seconds = (performance.now() - start) / 1000;
      const processes = spawned.map((entry) => ({
        command: entry.command,
        args: entry.args,
        atSeconds: (entry.startedMs - start) / 1000,
        seconds: entry.seconds,
      }));
      // The 720p job the first one queued (playable-first), run now: when its copy replaces the first.
      let followUp = null;
      const queued = message.policy === 'playable-first' ? await transcodeQueue.getJob(`${id}.r1.720p`) : null;
      if (queued && message.swap === false) await transcodeQueue.removeJobs((entry) => entry.id === queued.id);
      else if (queued) {
        const next = { id: queued.id, name: queued.name, attemptsMade: 0, data: queued.data, updateProgress: async () => {} };
        const followStart = performance.now();
        const followResult = await handlerFor(message.policy)(next);
        followUp = { seconds: (performance.now() - followStart) / 1000, result: followResult };
        await transcodeQueue.removeJobs((entry) => entry.id === queued.id);
      }
      process.send({
        id: message.id,
        ok: true,
        seconds,
        result,
        processes,
        workRoot,
        followUp,
        outputs: outputsOf(result, followUp?.result),
      });
    }
  } catch (error) {
    process.send({ id: message.id, ok: false, error: String(error?.stack ?? error) });
  }
});
// The bench stops this process with SIGTERM (bench/lib/runner.mjs): the event bus is closed first.
process.once('SIGTERM', () => {
  void Promise.all([bus.close(), transcodeQueue.close()]).finally(() => process.exit(0));
});
// The bench holds the other end of the IPC channel: when it goes away by any means, so does this.
process.once('disconnect', () => process.exit(1));
process.send({ ready: true });
