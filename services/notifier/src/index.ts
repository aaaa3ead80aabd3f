export { MAIL_KEEP_SENT_MS, createNotifier, mailerFromSettings, type NotifierHandle, type NotifierRuntime } from './service.js';
export { notifierSettingsFromEnv, type NotifierSettings } from './config.js';
export type { MailJob } from './emails/mail-job.js';
