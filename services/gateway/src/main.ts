#!/usr/bin/env node
import './tracing.js';
import { Redis } from 'ioredis';
import { buildOpenApiDocument } from '@portal/contracts/openapi';
import { ServiceMetrics, onShutdownSignal, serveProcessHealth, startServiceProcess } from '@portal/platform';
import { gatewaySettingsFromEnv } from './config.js';
import { createGateway } from './service.js';

// The gateway as a process of its own, in front of separately running services.
const { logger, infrastructure, bus } = startServiceProcess('gateway');
const settings = gatewaySettingsFromEnv();
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
const metricsServer = await serveProcessHealth(
  logger,
  { portVariable: 'METRICS_PORT', hostVariable: 'METRICS_HOST', defaultPort: 9464 },
  [],
  metrics,
);
onShutdownSignal(logger, [
  () => gateway.stop(),
  async () => void metricsServer.server.close(),
  () => bus.close(),
  async () => redis?.disconnect(),
]);
