#!/usr/bin/env node
import { join } from 'node:path';
import type { MediaJob } from '@portal/contracts';
import { FsBlobStore, SqliteEventBus, SqliteJobQueue, createLogger, onShutdownSignal } from '@portal/platform';
import { mediaWorkerSettingsFromEnv } from './config.js';
import { createMediaWorker } from './service.js';

// The media worker as a process of its own (embedded stores unless configured otherwise).
const logger = createLogger({ service: 'media-worker' });
const settings = mediaWorkerSettingsFromEnv();
const bus = new SqliteEventBus({ file: join(settings.dataDir, 'bus.sqlite'), logger });
const jobs = new SqliteJobQueue<MediaJob>({ file: join(settings.dataDir, 'jobs.sqlite'), queue: 'media', logger });
const worker = createMediaWorker(settings, { bus, jobs, blobs: new FsBlobStore(join(settings.dataDir, 'blobs')), logger });
await worker.start();
onShutdownSignal(logger, [() => worker.stop(), () => jobs.close(), () => bus.close()]);
