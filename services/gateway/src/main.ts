#!/usr/bin/env node
import { Redis } from 'ioredis';
import { buildOpenApiDocument } from '@portal/contracts/openapi';
import { createEventBus, createLogger, describeInfrastructure, infrastructureFromEnv, onShutdownSignal } from '@portal/platform';
import { gatewaySettingsFromEnv } from './config.js';
import { createGateway } from './http/server.js';

// The gateway as a process of its own, in front of separately running services.
const logger = createLogger({ service: 'gateway' });
const settings = gatewaySettingsFromEnv();
const infrastructure = infrastructureFromEnv();
logger.info(describeInfrastructure(infrastructure), 'infrastructure');
const bus = createEventBus(infrastructure, 'gateway', logger);
const redis = infrastructure.redisUrl ? new Redis(infrastructure.redisUrl, { maxRetriesPerRequest: 3 }) : undefined;
const gateway = await createGateway(settings, {
  logger,
  bus,
  openapi: buildOpenApiDocument(),
  instanceId: infrastructure.instanceId,
  ...(redis ? { redis } : {}),
});
await gateway.start();
onShutdownSignal(logger, [() => gateway.stop(), () => bus.close(), async () => redis?.disconnect()]);
