#!/usr/bin/env node
import { join } from 'node:path';
import type { MediaJob } from '@portal/contracts';
import { SqliteEventBus, SqliteJobQueue, createLogger, onShutdownSignal } from '@portal/platform';
import { MEDIA_QUEUE, evidenceSettingsFromEnv, jobsDatabaseFile } from './config.js';
import { createEvidenceService } from './service.js';

// The evidence service as a process of its own (embedded stores unless configured otherwise).
const logger = createLogger({ service: 'evidence' });
const settings = evidenceSettingsFromEnv();
const bus = new SqliteEventBus({ file: join(settings.dataDir, 'bus.sqlite'), logger });
const jobs = new SqliteJobQueue<MediaJob>({ file: jobsDatabaseFile(settings.dataDir), queue: MEDIA_QUEUE, logger });
const service = createEvidenceService(settings, { bus, jobs, logger });
await service.start();
onShutdownSignal(logger, [() => service.stop(), () => jobs.close(), () => bus.close()]);
