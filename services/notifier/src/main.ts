#!/usr/bin/env node
import './tracing.js';
import { StartupGate, createJobQueue, onShutdownSignal, serveProcessHealth, startServiceProcess } from '@portal/platform';
import { notifierSettingsFromEnv } from './config.js';
import type { MailJob } from './emails/mail-job.js';
import { MAIL_KEEP_SENT_MS, createNotifier } from './service.js';
import type { AppointmentJob } from './appointments/appointment-job.js';

// The notifier as a process of its own; adapters chosen by the environment alone. Its health
// port answers first (live, not ready while the job queues connect); its consumers join once
// Kafka answers.
const { logger, infrastructure, bus } = startServiceProcess('notifier');
const settings = notifierSettingsFromEnv();
const mail = createJobQueue<MailJob>(infrastructure, 'mail', logger, { keepCompletedMs: MAIL_KEEP_SENT_MS });
const appointments = createJobQueue<AppointmentJob>(infrastructure, 'appointment-messages', logger, { keepCompletedMs: MAIL_KEEP_SENT_MS });
// On distributed servers DATA_DIR is a pod's scratch space: no text or e-mail is "sent" into it.
const distributed = infrastructure.kafkaBrokers !== null || infrastructure.redisUrl !== null;
const notifier = createNotifier(settings, { bus, mail, appointments, logger, distributed });
const gate = new StartupGate();
gate.waitingFor('connecting the job queues');
const health = await serveProcessHealth(
  logger,
  { portVariable: 'HEALTH_PORT', hostVariable: 'HEALTH_HOST', defaultPort: 4004 },
  [
    gate.check,
    { name: 'mail queue', check: () => mail.ping() },
    { name: 'appointment queue', check: () => appointments.ping() },
    { name: 'mailer', check: () => notifier.mailer.ping() },
    // Text messages: Twilio's account answers, or (no provider set up) why none is sent.
    { name: 'sms', check: () => notifier.sms.ping() },
    { name: 'bus', check: () => bus.ping() },
    ...notifier.consumerChecks,
  ],
  notifier.metrics,
);
await notifier.start();
gate.started();
onShutdownSignal(logger, [
  () => notifier.stop(),
  async () => void health.server.close(),
  () => mail.close(),
  () => appointments.close(),
  () => bus.close(),
]);
