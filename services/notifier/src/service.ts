import { join } from 'node:path';
import {
  BackgroundSubscriptions,
  IdentityTokens,
  RetryJobLaterError,
  holdWhileAway,
  OutboxSmsSender,
  consumerChecks,
  type HealthCheck,
  TwilioSmsSender,
  UnconfiguredMailer,
  UnconfiguredSmsSender,
  NO_MAIL_SERVER,
  NO_SMS_PROVIDER,
  type SmsSender,
  OutboxMailer,
  SealedBox,
  ServiceMetrics,
  SmtpMailer,
  type EventBus,
  type JobQueue,
  type JobWorker,
  type Logger,
  type Mailer,
} from '@portal/platform';
import { TOPICS } from '@portal/contracts';
import type { Counter } from 'prom-client';
import type { JobHandler } from '@portal/platform';
import type { NotifierSettings } from './config.js';
import { MAIL_KINDS, type MailJob } from './emails/mail-job.js';
import { mailSender } from './emails/mail-sender.js';
import { NOTIFIER_GROUP, subscribeIdentityEvents } from './consumers/identity-events.js';
import type { AppointmentJob } from './appointments/appointment-job.js';
import { appointmentSender } from './appointments/appointment-sender.js';
import { APPOINTMENTS_GROUP, subscribeAppointmentEvents } from './appointments/appointment-events.js';
import { HttpAppointmentDirectory, type AppointmentDirectory } from './appointments/identity-client.js';

/**
 * Tries of an appointment message, with doubling waits from 30 s (about an hour in all) before it
 * counts as failed. A provider away uses none of them: the message is tried again until the
 * appointment's start (appointment-sender.ts).
 */
export const APPOINTMENT_JOB_OPTIONS = { attempts: 8, backoff: { type: 'exponential' as const, delay: 30_000 } };

/** While the mail server or the text provider is away: tried again after 15 s, 30 s, 1 min... then every 2 minutes. */
export const MESSAGE_RETRY_BACKOFF = { initialMs: 15_000, maxMs: 120_000 };

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
  /**
   * Appointment confirmations, reminders (delayed jobs) and announcements, by e-mail and text.
   * Both processes that run a notifier (main.ts, the all-in-one) give it; without it (a test of
   * e-mail alone) appointment events are left to a notifier that has it.
   */
  appointments?: JobQueue<AppointmentJob>;
  logger: Logger;
  mailer?: Mailer;
  sms?: SmsSender;
  /**
   * Whether the process runs on distributed servers (Kafka, Redis), its DATA_DIR a pod's scratch
   * space: then no text and no e-mail is written to an outbox there (smsFromSettings, mailerFromSettings).
   */
  distributed?: boolean;
  /** Identity's appointments (tests give their own address through settings.identityUrl). */
  directory?: AppointmentDirectory;
  /** Tries of an appointment message (tests make it fail for good sooner). */
  appointmentJobOptions?: typeof APPOINTMENT_JOB_OPTIONS;
  /** Waits while the mail server or the text provider is away (tests make them short). */
  messageRetryBackoff?: typeof MESSAGE_RETRY_BACKOFF;
  clock?: () => number;
}

export interface NotifierHandle {
  mailer: Mailer;
  sms: SmsSender;
  metrics: ServiceMetrics;
  /** Its consumers' readiness checks: each says what it waits for while it holds messages or subscribes. */
  consumerChecks: HealthCheck[];
  start(): Promise<void>;
  stop(): Promise<void>;
}

/**
 * The mailer chosen by configuration: SMTP when SMTP_URL is set; else the .eml outbox under
 * DATA_DIR, on one machine only. A notifier on distributed servers (its folder a pod's scratch
 * space) without SMTP_URL sends nothing and says so (UnconfiguredMailer): its e-mails wait.
 */
export function mailerFromSettings(settings: NotifierSettings, logger: Logger, { distributed = false } = {}): Mailer {
  if (settings.smtpUrl) return new SmtpMailer(settings.smtpUrl, settings.from);
  return distributed ? new UnconfiguredMailer() : new OutboxMailer(join(settings.dataDir, 'outbox'), settings.from, logger);
}

/**
 * The text-message sender chosen by configuration: Twilio when TWILIO_ACCOUNT_SID is set; else
 * the JSON outbox under DATA_DIR, on one machine only. A notifier on distributed servers (its
 * folder a pod's scratch space) without a provider sends nothing and says so (UnconfiguredSmsSender).
 */
export function smsFromSettings(settings: NotifierSettings, logger: Logger, { distributed = false } = {}): SmsSender {
  if (settings.twilio) return new TwilioSmsSender(settings.twilio);
  return distributed ? new UnconfiguredSmsSender() : new OutboxSmsSender(join(settings.dataDir, 'sms-outbox'), logger);
}

export function createNotifier(settings: NotifierSettings, runtime: NotifierRuntime): NotifierHandle {
  const mailer = runtime.mailer ?? mailerFromSettings(settings, runtime.logger, { distributed: runtime.distributed ?? false });
  const sms = runtime.sms ?? smsFromSettings(settings, runtime.logger, { distributed: runtime.distributed ?? false });
  const clock = runtime.clock ?? Date.now;
  const jobOptions = runtime.appointmentJobOptions ?? APPOINTMENT_JOB_OPTIONS;
  const retryBackoff = runtime.messageRetryBackoff ?? MESSAGE_RETRY_BACKOFF;
  const consumers = new BackgroundSubscriptions(runtime.logger);
  let worker: JobWorker | undefined;
  let appointmentWorker: JobWorker | undefined;
  const metrics = new ServiceMetrics('notifier');
  metrics.watchQueue(runtime.mail);
  if (runtime.appointments) {
    metrics.watchQueue(runtime.appointments);
    metrics.watchConsumerLag(runtime.bus, APPOINTMENTS_GROUP, [TOPICS.appointments]);
  }
  metrics.watchConsumerLag(runtime.bus, NOTIFIER_GROUP, [TOPICS.users, TOPICS.passwordResets, TOPICS.moderation]);
  const groups = runtime.appointments ? [NOTIFIER_GROUP, APPOINTMENTS_GROUP] : [NOTIFIER_GROUP];
  metrics.watchConsumers(runtime.bus, groups);
  const sent = metrics.counter('portal_emails_sent_total', 'E-mails handed to the mail server (or the outbox)', ['kind']);
  const failed = metrics.counter('portal_emails_failed_total', 'Tries to send an e-mail that failed (each is retried)', ['kind']);
  // Every kind's series from the start, at 0: an alert comparing failures with successes (and
  // Prometheus's increase() of a first failure) needs them before the first e-mail of a kind.
  for (const kind of MAIL_KINDS) {
    sent.inc({ kind }, 0);
    failed.inc({ kind }, 0);
  }
  const appointmentOutcomes = metrics.counter(
    'portal_appointment_messages_total',
    'Appointment messages by channel and outcome (sent, skipped, not_sent, failed; failed_try: a try that failed; postponed: put off, no try spent, while the provider was away)',
    ['channel', 'outcome'],
  );
  // Every series from the start, at 0, as for e-mails: an alert's increase() sees the first failure.
  if (runtime.appointments) {
    for (const channel of ['email', 'sms'])
      for (const outcome of ['sent', 'skipped', 'not_sent', 'failed', 'failed_try']) appointmentOutcomes.inc({ channel, outcome }, 0);
  }
  return {
    mailer,
    sms,
    metrics,
    consumerChecks: consumerChecks(() => runtime.bus.consumerStates(), groups),
    async start() {
      // While the mail server is away an e-mail waits, its tries unspent, until its sendBy
      // (MAIL_RETRY_HOURS; a reset code's expiry); then it fails for good, saying why.
      const sendMail = holdWhileAway(
        countOutcomes(
          sent,
          failed,
          mailSender({
            mailer,
            sealer: new SealedBox(settings.internalSecret),
            branding: { productName: settings.productName, publicUrl: settings.publicUrl },
            logger: runtime.logger,
            clock,
          }),
        ),
        {
          logger: runtime.logger,
          backoff: retryBackoff,
          deadline: (job) => (job.data.sendBy ? Date.parse(job.data.sendBy) : null),
          gaveUp: (job, failure) =>
            job.data.kind === 'reset-code'
              ? `the code expired before the mail server could be reached (${failure.reason})`
              : `the mail server could not be reached in time (${failure.reason})`,
        },
      );
      worker = await runtime.mail.work(metrics.timeJobs('mail', sendMail), { concurrency: 2, lockDurationMs: 60_000 });
      // Consumes once Kafka answers (readiness says "degraded" until then).
      const mailQueue = [{ name: 'mail queue', check: () => runtime.mail.ping() }];
      consumers.start((signal) =>
        subscribeIdentityEvents(runtime.bus, runtime.mail, mailer, runtime.logger, {
          dependencies: mailQueue,
          signal,
          retryForMs: settings.mailRetryMs,
        }),
      );
      const appointments = runtime.appointments;
      if (appointments) {
        const send = appointmentSender({
          directory: runtime.directory ?? new HttpAppointmentDirectory(settings.identityUrl, new IdentityTokens(settings.internalSecret)),
          mailer,
          sms,
          branding: { productName: settings.productName, publicUrl: settings.publicUrl },
          logger: runtime.logger,
          clock,
          attempts: jobOptions.attempts,
          retryBackoff,
        });
        appointmentWorker = await appointments.work(
          metrics.timeJobs('appointment', async (job) => {
            const outcome = await send(job).catch((error: unknown) => {
              appointmentOutcomes.inc({
                channel: job.data.channel,
                outcome: error instanceof RetryJobLaterError ? 'postponed' : 'failed_try',
              });
              throw error;
            });
            const name = 'sent' in outcome ? 'sent' : 'skipped' in outcome ? 'skipped' : 'notSent' in outcome ? 'not_sent' : 'failed';
            appointmentOutcomes.inc({ channel: job.data.channel, outcome: name });
            return outcome;
          }),
          { concurrency: 4, lockDurationMs: 60_000 },
        );
        consumers.start((signal) =>
          subscribeAppointmentEvents({
            bus: runtime.bus,
            queue: appointments,
            mailer,
            sms,
            reminders: settings.reminders,
            jobOptions,
            logger: runtime.logger,
            clock,
            dependencies: [{ name: 'appointment queue', check: () => appointments.ping() }],
            signal,
          }),
        );
      }
      const textsUnsent = sms instanceof UnconfiguredSmsSender;
      const mailUnsent = mailer instanceof UnconfiguredMailer;
      runtime.logger.info(
        {
          transport: settings.smtpUrl ? 'smtp' : mailUnsent ? 'none' : 'outbox',
          sms: settings.twilio ? 'twilio' : textsUnsent ? 'none' : 'outbox',
        },
        'notifier started',
      );
      if (mailUnsent) {
        runtime.logger.error(
          { reason: NO_MAIL_SERVER },
          'e-mails will not be sent, they wait in the queue: set SMTP_URL (the Secret portal-smtp)',
        );
      }
      if (textsUnsent && runtime.appointments) {
        runtime.logger.error(
          { reason: NO_SMS_PROVIDER },
          'appointment texts will not be sent: set TWILIO_ACCOUNT_SID, TWILIO_AUTH_TOKEN and TWILIO_FROM (the Secret portal-sms)',
        );
      }
    },
    async stop() {
      await consumers.close();
      await worker?.close();
      await appointmentWorker?.close();
      await mailer.close();
      await sms.close();
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
