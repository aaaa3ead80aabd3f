#!/usr/bin/env node
import './tracing.js';
import { mediaQueueList, openMediaQueues, type MediaJob } from '@portal/contracts';
import { StartupGate, createJobQueue, listenFirst, onShutdownSignal, startServiceProcess, untilAvailable } from '@portal/platform';
import { evidenceSettingsFromEnv } from './config.js';
import { createEvidenceService } from './service.js';

// The evidence service as a process of its own; adapters chosen by the environment alone. It
// listens first (live, not ready), then opens its stores, tried again while MongoDB is away.
const { logger, infrastructure, bus } = startServiceProcess('evidence');
const settings = evidenceSettingsFromEnv();
const gate = new StartupGate();
const listening = await listenFirst({ port: settings.port, host: settings.host, gate, logger });
const mediaQueues = openMediaQueues((queue) => createJobQueue<MediaJob>(infrastructure, queue, logger));
const service = await untilAvailable(() => createEvidenceService(settings, { bus, mediaQueues, logger, infrastructure }), {
  what: 'opening the evidence stores',
  logger,
  onWait: (failure) => gate.waitingFor(`waiting for ${failure.dependency}: ${failure.reason}`),
});
await service.start({ server: listening });
gate.started();
onShutdownSignal(logger, [
  () => service.stop(),
  () => Promise.all(mediaQueueList(mediaQueues).map((queue) => queue.close())).then(() => undefined),
  () => bus.close(),
]);
