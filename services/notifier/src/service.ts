import { join } from 'node:path';
import {
  OutboxMailer,
  SealedBox,
  SmtpMailer,
  type EventBus,
  type JobQueue,
  type JobWorker,
  type Logger,
  type Mailer,
  type Subscription,
} from '@portal/platform';
import type { NotifierSettings } from './config.js';
import type { MailJob } from './emails/mail-job.js';
import { mailSender } from './emails/mail-sender.js';
import { subscribeIdentityEvents } from './consumers/identity-events.js';

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
  return {
    mailer,
    async start() {
      worker = await runtime.mail.work(
        mailSender({
          mailer,
          sealer: new SealedBox(settings.internalSecret),
          branding: { productName: settings.productName, publicUrl: settings.publicUrl },
          logger: runtime.logger,
          clock: runtime.clock ?? Date.now,
        }),
        { concurrency: 2, lockDurationMs: 60_000 },
      );
      subscription = await subscribeIdentityEvents(runtime.bus, runtime.mail, runtime.logger);
      runtime.logger.info({ transport: settings.smtpUrl ? 'smtp' : 'outbox' }, 'notifier started');
    },
    async stop() {
      await subscription?.close();
      await worker?.close();
      await mailer.close();
    },
  };
}
