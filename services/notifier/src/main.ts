#!/usr/bin/env node
import { join } from 'node:path';
import { SqliteEventBus, SqliteJobQueue, createLogger, onShutdownSignal } from '@portal/platform';
import { notifierSettingsFromEnv } from './config.js';
import type { MailJob } from './emails/mail-job.js';
import { createNotifier } from './service.js';

// The notifier as a process of its own (embedded stores unless configured otherwise).
const logger = createLogger({ service: 'notifier' });
const settings = notifierSettingsFromEnv();
const bus = new SqliteEventBus({ file: join(settings.dataDir, 'bus.sqlite'), logger });
const mail = new SqliteJobQueue<MailJob>({ file: join(settings.dataDir, 'jobs.sqlite'), queue: 'mail', logger, keepCompletedMs: 7 * 24 * 3600_000 });
const notifier = createNotifier(settings, { bus, mail, logger });
await notifier.start();
onShutdownSignal(logger, [() => notifier.stop(), () => mail.close(), () => bus.close()]);
