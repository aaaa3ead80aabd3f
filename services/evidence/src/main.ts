#!/usr/bin/env node
import './tracing.js';
import type { MediaJob } from '@portal/contracts';
import { createJobQueue, onShutdownSignal, startServiceProcess } from '@portal/platform';
import { MEDIA_QUEUE, evidenceSettingsFromEnv } from './config.js';
import { createEvidenceService } from './service.js';

// The evidence service as a process of its own; adapters chosen by the environment alone.
const { logger, infrastructure, bus } = startServiceProcess('evidence');
const settings = evidenceSettingsFromEnv();
const jobs = createJobQueue<MediaJob>(infrastructure, MEDIA_QUEUE, logger);
const service = await createEvidenceService(settings, { bus, jobs, logger, infrastructure });
await service.start();
onShutdownSignal(logger, [() => service.stop(), () => jobs.close(), () => bus.close()]);
