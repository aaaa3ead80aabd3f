export {
  APPOINTMENT_JOB_OPTIONS,
  MAIL_KEEP_SENT_MS,
  createNotifier,
  mailerFromSettings,
  smsFromSettings,
  type NotifierHandle,
  type NotifierRuntime,
} from './service.js';
export { notifierSettingsFromEnv, type NotifierSettings } from './config.js';
export type { MailJob } from './emails/mail-job.js';
export { appointmentJobId, deliveryKey, type AppointmentJob } from './appointments/appointment-job.js';
