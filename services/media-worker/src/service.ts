import type { MediaJob } from '@portal/contracts';
import { ServiceMetrics, drainJobWorker, locateFfmpeg, type BlobStore, type EventBus, type JobQueue, type JobWorker, type Logger } from '@portal/platform';
import type { MediaWorkerSettings } from './config.js';
import { mediaJobHandler } from './media-job-handler.js';

export interface MediaWorkerRuntime {
  bus: EventBus;
  jobs: JobQueue<MediaJob>;
  blobs: BlobStore;
  logger: Logger;
}

export interface MediaWorkerHandle {
  metrics: ServiceMetrics;
  start(): Promise<void>;
  /**
   * Stops taking jobs and lets the running ones finish; with `handBackAfterMs`, those still
   * running then are handed back to the queue for another worker.
   */
  stop(options?: { handBackAfterMs?: number }): Promise<void>;
}

export function createMediaWorker(settings: MediaWorkerSettings, runtime: MediaWorkerRuntime): MediaWorkerHandle {
  let worker: JobWorker | undefined;
  const metrics = new ServiceMetrics('media-worker');
  metrics.watchQueue(runtime.jobs);
  return {
    metrics,
    async start() {
      const binaries = locateFfmpeg();
      runtime.logger.info({ ...binaries, concurrency: settings.concurrency, caps: settings.caps }, 'media worker starting');
      worker = await runtime.jobs.work(
        metrics.timeJobs('media', mediaJobHandler({ blobs: runtime.blobs, bus: runtime.bus, logger: runtime.logger, workRoot: settings.workRoot, caps: settings.caps })),
        { concurrency: settings.concurrency, lockDurationMs: settings.lockDurationMs },
      );
    },
    async stop(options = {}) {
      if (!worker) return;
      if (options.handBackAfterMs === undefined) await worker.close();
      else await drainJobWorker(worker, options.handBackAfterMs, runtime.logger);
    },
  };
}
