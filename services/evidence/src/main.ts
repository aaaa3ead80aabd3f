#!/usr/bin/env node
import './tracing.js';
import { mediaQueueList, openMediaQueues, type MediaJob } from '@portal/contracts';
import { createJobQueue, onShutdownSignal, startServiceProcess } from '@portal/platform';
import { evidenceSettingsFromEnv } from './config.js';
import { createEvidenceService } from './service.js';

// The evidence service as a process of its own; adapters chosen by the environment alone.
const { logger, infrastructure, bus } = startServiceProcess('evidence');
const settings = evidenceSettingsFromEnv();
const mediaQueues = openMediaQueues((queue) => createJobQueue<MediaJob>(infrastructure, queue, logger));
const service = await createEvidenceService(settings, { bus, mediaQueues, logger, infrastructure });
await service.start();
onShutdownSignal(logger, [
  () => service.stop(),
  () => Promise.all(mediaQueueList(mediaQueues).map((queue) => queue.close())).then(() => undefined),
  () => bus.close(),
]);
