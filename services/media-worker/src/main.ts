#!/usr/bin/env node
import './tracing.js';
import { MEDIA_RESULTS_QUEUE, mediaQueueList, openMediaQueues, type MediaJob } from '@portal/contracts';
import {
  StartupGate,
  createBlobStore,
  createJobQueue,
  finishJobsWithinMs,
  onShutdownSignal,
  serveProcessHealth,
  shutdownGraceMsFromEnv,
  startServiceProcess,
  type QueuedEvent,
} from '@portal/platform';
import { mediaWorkerSettingsFromEnv } from './config.js';
import { createMediaWorker } from './service.js';

// The media worker as a process of its own; adapters chosen by the environment alone.
const { logger, infrastructure, bus } = startServiceProcess('media-worker');
const settings = mediaWorkerSettingsFromEnv();
const mediaQueues = openMediaQueues((queue) => createJobQueue<MediaJob>(infrastructure, queue, logger));
const results = createJobQueue<QueuedEvent>(infrastructure, MEDIA_RESULTS_QUEUE, logger);
const blobs = createBlobStore(infrastructure);
const worker = createMediaWorker(settings, { bus, mediaQueues, results, blobs, logger });
// The health port answers first (live, not ready while the job queues connect).
const gate = new StartupGate();
gate.waitingFor('connecting the job queues');
const health = await serveProcessHealth(
  logger,
  { portVariable: 'HEALTH_PORT', hostVariable: 'HEALTH_HOST', defaultPort: 4003 },
  [
    gate.check,
    { name: 'jobs', check: () => mediaQueues.stills.ping() },
    { name: 'blobs', check: () => blobs.ping() },
    { name: 'bus', check: () => bus.ping() },
  ],
  worker.metrics,
);
await worker.start();
gate.started();
const graceMs = shutdownGraceMsFromEnv();
onShutdownSignal(
  logger,
  [
    // Finish the running jobs before anything closes; those still running near the end of the grace
    // period (SHUTDOWN_GRACE_MS) go back to the queue for another worker, no try counted.
    () => worker.stop({ handBackAfterMs: finishJobsWithinMs(graceMs) }),
    async () => void health.server.close(),
    () => Promise.all([...mediaQueueList(mediaQueues), results].map((queue) => queue.close())).then(() => undefined),
    () => bus.close(),
  ],
  graceMs,
);
