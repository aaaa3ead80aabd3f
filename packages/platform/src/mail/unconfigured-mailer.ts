import { DependencyUnavailableError } from '../resilience/failures.js';
import type { Mailer, SentMail } from './mailer.js';

/** Why no e-mail goes, for the log and the readiness answer. */
export const NO_MAIL_SERVER = 'no mail server is set up (SMTP_URL): e-mails wait in the queue';

/**
 * The mailer of a notifier that runs on distributed servers without SMTP_URL. The .eml outbox is
 * the all-in-one portal's: in a pod its folder is scratch space that nobody reads and that goes
 * with the pod, so a reset code or a confirmation link "sent" there would be lost while the
 * portal said sent. This mailer sends nothing and says so: every send fails as a dependency
 * that is away (the e-mail waits in the queue, no try spent, until its time is up, as while a
 * mail server does not answer; what waited goes once SMTP_URL is set), and its readiness check
 * fails (the notifier answers degraded, portal_dependency_up{dependency="mailer"} is 0, an alert
 * fires).
 */
export class UnconfiguredMailer implements Mailer {
  async send(): Promise<SentMail> {
    throw new DependencyUnavailableError('smtp', NO_MAIL_SERVER);
  }

  /** Nothing was kept of any message. */
  async forget(): Promise<number> {
    return 0;
  }

  async ping(): Promise<void> {
    throw new Error(NO_MAIL_SERVER);
  }

  async close(): Promise<void> {}
}
