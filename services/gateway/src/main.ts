#!/usr/bin/env node
import { join } from 'node:path';
import { buildOpenApiDocument } from '@portal/contracts/openapi';
import { SqliteEventBus, createLogger, onShutdownSignal } from '@portal/platform';
import { gatewaySettingsFromEnv } from './config.js';
import { createGateway } from './http/server.js';

// The gateway as a process of its own, in front of separately running services.
const logger = createLogger({ service: 'gateway' });
const settings = gatewaySettingsFromEnv();
const bus = new SqliteEventBus({ file: join(process.env.DATA_DIR ?? './data', 'bus.sqlite'), logger });
const gateway = await createGateway(settings, { logger, bus, openapi: buildOpenApiDocument() });
await gateway.start();
onShutdownSignal(logger, [() => gateway.stop(), () => bus.close()]);
