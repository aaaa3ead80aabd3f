import type { MediaJob } from '@portal/contracts';
import { ServiceMetrics, locateFfmpeg, type BlobStore, type EventBus, type JobQueue, type JobWorker, type Logger } from '@portal/platform';
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
  /** Stops taking jobs and lets the running ones finish. */
  stop(): Promise<void>;
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
    async stop() {
      await worker?.close();
    },
  };
}
