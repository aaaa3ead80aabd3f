#!/usr/bin/env node
import './tracing.js';
import { onShutdownSignal, startServiceProcess } from '@portal/platform';
import { identitySettingsFromEnv } from './config.js';
import { createIdentityService } from './service.js';

// The identity service as a process of its own. The adapters (Kafka, MongoDB, Redis, S3, or the
// embedded ones under DATA_DIR) are chosen by the environment alone.
const { logger, infrastructure, bus } = startServiceProcess('identity');
const settings = identitySettingsFromEnv();
const service = await createIdentityService(settings, { bus, logger, infrastructure });
await service.start();
onShutdownSignal(logger, [() => service.stop(), () => bus.close()]);
