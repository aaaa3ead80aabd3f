#!/usr/bin/env node
import './tracing.js';
import { Redis } from 'ioredis';
import { buildOpenApiDocument } from '@portal/contracts/openapi';
import {
  ServiceMetrics,
  createEventBus,
  createLogger,
  describeInfrastructure,
  envPort,
  infrastructureFromEnv,
  onShutdownSignal,
  serveHealthAndMetrics,
} from '@portal/platform';
import { gatewaySettingsFromEnv } from './config.js';
import { createGateway } from './http/server.js';

// The gateway as a process of its own, in front of separately running services.
const logger = createLogger({ service: 'gateway' });
const settings = gatewaySettingsFromEnv();
const infrastructure = infrastructureFromEnv();
logger.info(describeInfrastructure(infrastructure), 'infrastructure');
const bus = createEventBus(infrastructure, 'gateway', logger);
const redis = infrastructure.redisUrl ? new Redis(infrastructure.redisUrl, { maxRetriesPerRequest: 3 }) : undefined;
const metrics = new ServiceMetrics('gateway');
const gateway = await createGateway(settings, {
  logger,
  metrics,
  bus,
  openapi: buildOpenApiDocument(),
  instanceId: infrastructure.instanceId,
  ...(redis ? { redis } : {}),
});
await gateway.start();
// Metrics on a port of their own (METRICS_PORT, default 9464), for Prometheus inside the cluster only.
const metricsServer = await serveHealthAndMetrics(envPort.parse(process.env.METRICS_PORT ?? '9464'), process.env.METRICS_HOST ?? '0.0.0.0', [], metrics);
logger.info({ url: metricsServer.url }, 'metrics listening');
onShutdownSignal(logger, [() => gateway.stop(), async () => void metricsServer.server.close(), () => bus.close(), async () => redis?.disconnect()]);
