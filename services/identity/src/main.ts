#!/usr/bin/env node
import './tracing.js';
import { StartupGate, listenFirst, onShutdownSignal, startServiceProcess, untilAvailable } from '@portal/platform';
import { identitySettingsFromEnv } from './config.js';
import { createIdentityService } from './service.js';

// The identity service as a process of its own. The adapters (Kafka, MongoDB, Redis, S3, or the
// embedded ones under DATA_DIR) are chosen by the environment alone. It listens first (live, not
// ready), then opens its stores, tried again while MongoDB is away: no crash-loop.
const { logger, infrastructure, bus } = startServiceProcess('identity');
const settings = identitySettingsFromEnv();
const gate = new StartupGate();
const listening = await listenFirst({ port: settings.port, host: settings.host, gate, logger });
const service = await untilAvailable(() => createIdentityService(settings, { bus, logger, infrastructure }), {
  what: 'opening the identity stores',
  logger,
  onWait: (failure) => gate.waitingFor(`waiting for ${failure.dependency}: ${failure.reason}`),
});
await service.start({ server: listening });
gate.started();
onShutdownSignal(logger, [() => service.stop(), () => bus.close()]);
