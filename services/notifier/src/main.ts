#!/usr/bin/env node
import './tracing.js';
import {
  createEventBus,
  createJobQueue,
  createLogger,
  describeInfrastructure,
  envPort,
  infrastructureFromEnv,
  onShutdownSignal,
  serveHealthAndMetrics,
} from '@portal/platform';
import { notifierSettingsFromEnv } from './config.js';
import type { MailJob } from './emails/mail-job.js';
import { MAIL_KEEP_SENT_MS, createNotifier } from './service.js';

// The notifier as a process of its own; adapters chosen by the environment alone.
const logger = createLogger({ service: 'notifier' });
const settings = notifierSettingsFromEnv();
const infrastructure = infrastructureFromEnv();
logger.info(describeInfrastructure(infrastructure), 'infrastructure');
const bus = createEventBus(infrastructure, 'notifier', logger);
const mail = createJobQueue<MailJob>(infrastructure, 'mail', logger, { keepCompletedMs: MAIL_KEEP_SENT_MS });
const notifier = createNotifier(settings, { bus, mail, logger });
await notifier.start();
const health = await serveHealthAndMetrics(envPort.parse(process.env.HEALTH_PORT ?? '4004'), process.env.HEALTH_HOST ?? '0.0.0.0', [
  { name: 'mail queue', check: () => mail.ping() },
  { name: 'mailer', check: () => notifier.mailer.ping() },
  { name: 'bus', check: () => bus.ping() },
], notifier.metrics);
logger.info({ url: health.url }, 'health endpoints listening');
onShutdownSignal(logger, [() => notifier.stop(), async () => void health.server.close(), () => mail.close(), () => bus.close()]);
