#!/usr/bin/env node
import './tracing.js';
import type { MediaJob } from '@portal/contracts';
import {
  createBlobStore,
  createEventBus,
  createJobQueue,
  createLogger,
  describeInfrastructure,
  envPort,
  infrastructureFromEnv,
  onShutdownSignal,
  serveHealthAndMetrics,
} from '@portal/platform';
import { mediaWorkerSettingsFromEnv } from './config.js';
import { createMediaWorker } from './service.js';

// The media worker as a process of its own; adapters chosen by the environment alone.
const logger = createLogger({ service: 'media-worker' });
const settings = mediaWorkerSettingsFromEnv();
const infrastructure = infrastructureFromEnv();
logger.info(describeInfrastructure(infrastructure), 'infrastructure');
const bus = createEventBus(infrastructure, 'media-worker', logger);
const jobs = createJobQueue<MediaJob>(infrastructure, 'media', logger);
const blobs = createBlobStore(infrastructure);
const worker = createMediaWorker(settings, { bus, jobs, blobs, logger });
await worker.start();
const health = await serveHealthAndMetrics(envPort.parse(process.env.HEALTH_PORT ?? '4003'), process.env.HEALTH_HOST ?? '0.0.0.0', [
  { name: 'jobs', check: () => jobs.ping() },
  { name: 'blobs', check: () => blobs.ping() },
  { name: 'bus', check: () => bus.ping() },
], worker.metrics);
logger.info({ url: health.url }, 'health endpoints listening');
onShutdownSignal(logger, [
  // Finish the running jobs (or hand them back when the grace period ends) before anything closes.
  () => worker.stop(),
  async () => void health.server.close(),
  () => jobs.close(),
  () => bus.close(),
]);
