#!/usr/bin/env node
import { join } from 'node:path';
import { SqliteEventBus, createLogger, onShutdownSignal } from '@portal/platform';
import { identitySettingsFromEnv } from './config.js';
import { createIdentityService } from './service.js';

// The identity service as a process of its own. The distributed adapters (MongoDB, Redis, Kafka)
// are chosen by configuration; without them it runs on the embedded stores under DATA_DIR.
const logger = createLogger({ service: 'identity' });
const settings = identitySettingsFromEnv();
const bus = new SqliteEventBus({ file: join(settings.dataDir, 'bus.sqlite'), logger });
const service = createIdentityService(settings, { bus, logger });
await service.start();
onShutdownSignal(logger, [() => service.stop(), () => bus.close()]);
