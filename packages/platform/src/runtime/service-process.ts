import type { Logger } from 'pino';
import { envPort } from '../config/env.js';
import type { EventBus } from '../events/event-bus.js';
import { createLogger } from '../logging/logger.js';
import { createFilesPrivately, keepDataDirPrivate } from './private-files.js';
import { serveHealthAndMetrics, type HealthCheck } from './health-server.js';
import { createEventBus, describeInfrastructure, infrastructureFromEnv, type InfrastructureSettings } from './infrastructure.js';

export interface ServiceProcess {
  logger: Logger;
  infrastructure: InfrastructureSettings;
  bus: EventBus;
}

/**
 * What every service's main.ts does first: files it creates private to its user (0600, DATA_DIR
 * 0700), its logger, the adapters the environment chose (logged once, so an operator sees which
 * servers a process uses) and its event bus client.
 */
export function startServiceProcess(service: string): ServiceProcess {
  createFilesPrivately();
  const logger = createLogger({ service });
  const infrastructure = infrastructureFromEnv();
  keepDataDirPrivate(infrastructure.dataDir);
  logger.info(describeInfrastructure(infrastructure), 'infrastructure');
  return { logger, infrastructure, bus: createEventBus(infrastructure, service, logger) };
}

/**
 * Health, readiness and metrics of a process on the port named by `portVariable` (and host by
 * `hostVariable`, default 0.0.0.0): the media worker's and notifier's HEALTH_PORT, the gateway's
 * METRICS_PORT.
 */
export async function serveProcessHealth(
  logger: Logger,
  options: { portVariable: string; hostVariable: string; defaultPort: number },
  checks: HealthCheck[],
  metrics: { contentType(): string; text(): Promise<string>; watchDependencies?(checks: HealthCheck[]): void },
): Promise<Awaited<ReturnType<typeof serveHealthAndMetrics>>> {
  metrics.watchDependencies?.(checks);
  const port = envPort.parse(process.env[options.portVariable] ?? String(options.defaultPort));
  const served = await serveHealthAndMetrics(port, process.env[options.hostVariable] ?? '0.0.0.0', checks, metrics);
  logger.info({ url: served.url }, checks.length ? 'health endpoints listening' : 'metrics listening');
  return served;
}
