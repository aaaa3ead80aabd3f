import { join } from 'node:path';
import {
  OutboxMailer,
  SealedBox,
  ServiceMetrics,
  SmtpMailer,
  type EventBus,
  type JobQueue,
  type JobWorker,
  type Logger,
  type Mailer,
  type Subscription,
} from '@portal/platform';
import { TOPICS } from '@portal/contracts';
import type { Counter } from 'prom-client';
import type { JobHandler } from '@portal/platform';
import type { NotifierSettings } from './config.js';
import { MAIL_KINDS, type MailJob } from './emails/mail-job.js';
import { mailSender } from './emails/mail-sender.js';
import { subscribeIdentityEvents } from './consumers/identity-events.js';

/**
 * How long a sent e-mail's job is kept: long enough that an event delivered again (at least
 * once) does not send the e-mail twice, short enough that addresses do not pile up. A deleted
 * account's jobs go at once.
 */
export const MAIL_KEEP_SENT_MS = 3600_000;

export interface NotifierRuntime {
  bus: EventBus;
  /** The mail queue: e-mails wait here until the mail server takes them. */
  mail: JobQueue<MailJob>;
  logger: Logger;
  mailer?: Mailer;
  clock?: () => number;
}

export interface NotifierHandle {
  mailer: Mailer;
  metrics: ServiceMetrics;
  start(): Promise<void>;
  stop(): Promise<void>;
}

/** The mailer chosen by configuration alone: SMTP when SMTP_URL is set, else the .eml outbox. */
export function mailerFromSettings(settings: NotifierSettings, logger: Logger): Mailer {
  return settings.smtpUrl
    ? new SmtpMailer(settings.smtpUrl, settings.from)
    : new OutboxMailer(join(settings.dataDir, 'outbox'), settings.from, logger);
}

export function createNotifier(settings: NotifierSettings, runtime: NotifierRuntime): NotifierHandle {
  const mailer = runtime.mailer ?? mailerFromSettings(settings, runtime.logger);
  let subscription: Subscription | undefined;
  let worker: JobWorker | undefined;
  const metrics = new ServiceMetrics('notifier');
  metrics.watchQueue(runtime.mail);
  metrics.watchConsumerLag(runtime.bus, 'notifier', [TOPICS.users, TOPICS.passwordResets, TOPICS.moderation]);
  const sent = metrics.counter('portal_emails_sent_total', 'E-mails handed to the mail server (or the outbox)', ['kind']);
  const failed = metrics.counter('portal_emails_failed_total', 'Tries to send an e-mail that failed (each is retried)', ['kind']);
  // Every kind's series from the start, at 0: an alert comparing failures with successes (and
  // Prometheus's increase() of a first failure) needs them before the first e-mail of a kind.
  for (const kind of MAIL_KINDS) {
    sent.inc({ kind }, 0);
    failed.inc({ kind }, 0);
  }
  return {
    mailer,
    metrics,
    async start() {
      worker = await runtime.mail.work(
        metrics.timeJobs('mail', countOutcomes(sent, failed, mailSender({
          mailer,
          sealer: new SealedBox(settings.internalSecret),
          branding: { productName: settings.productName, publicUrl: settings.publicUrl },
          logger: runtime.logger,
          clock: runtime.clock ?? Date.now,
        }))),
        { concurrency: 2, lockDurationMs: 60_000 },
      );
      subscription = await subscribeIdentityEvents(runtime.bus, runtime.mail, mailer, runtime.logger);
      runtime.logger.info({ transport: settings.smtpUrl ? 'smtp' : 'outbox' }, 'notifier started');
    },
    async stop() {
      await subscription?.close();
      await worker?.close();
      await mailer.close();
    },
  };
}

/** Counts e-mails sent and failed tries, by kind. */
function countOutcomes(sent: Counter<string>, failed: Counter<string>, send: JobHandler<MailJob>): JobHandler<MailJob> {
  return async (job) => {
    try {
      const result = await send(job);
      sent.inc({ kind: job.data.kind });
      return result;
    } catch (error) {
      failed.inc({ kind: job.data.kind });
      throw error;
    }
  };
}
