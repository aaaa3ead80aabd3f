import { asOneLine } from '@portal/contracts';
import type { ActiveJob, Logger, Mailer, SealedBox } from '@portal/platform';
import type { MailJob } from './mail-job.js';
import {
  accountNoticeEmail,
  moderationDigestEmail,
  resetCodeEmail,
  verificationEmail,
  type Branding,
  type EmailContent,
} from './templates.js';

export interface MailSenderDeps {
  mailer: Mailer;
  sealer: SealedBox;
  branding: Branding;
  logger: Logger;
  clock: () => number;
}

/**
 * Sends one queued e-mail. A failure to hand it over throws, so the queue tries again with
 * backoff; a message that can never be sent (a secret that does not open) is logged and dropped.
 * The Message-ID comes from the event, so a rare duplicate is recognisable as the same message.
 */
export function mailSender(deps: MailSenderDeps) {
  return async (job: ActiveJob<MailJob>): Promise<{ messageId: string } | { dropped: string }> => {
    const mail = job.data;
    let content: EmailContent;
    try {
      content = render(deps, mail);
    } catch (error) {
      deps.logger.error({ eventId: mail.eventId, err: error }, 'e-mail dropped: its secret could not be opened');
      return { dropped: 'sealed secret could not be opened' };
    }
    const sent = await deps.mailer.send({
      to: mail.to,
      ...content,
      messageId: `${mail.eventId}@portal.invalid`,
      ...(mail.userId ? { recipientId: mail.userId } : {}),
    });
    deps.logger.info({ eventId: mail.eventId, kind: mail.kind, to: mail.to, attempt: job.attemptsMade + 1 }, 'e-mail sent');
    return { messageId: sent.messageId };
  };
}

function render(deps: MailSenderDeps, queued: MailJob): EmailContent {
  // The name a person typed, made one line: a name stored before the field refused line breaks
  // cannot write a line of its own into a message sent in the portal's name.
  const mail = { ...queued, fullName: asOneLine(queued.fullName) };
  if (mail.kind === 'reset-code') {
    const minutes = Math.max(1, Math.round((Date.parse(mail.expiresAt) - deps.clock()) / 60_000));
    return resetCodeEmail(deps.branding, { fullName: mail.fullName, email: mail.to, code: deps.sealer.open(mail.sealedCode), minutes });
  }
  if (mail.kind === 'moderation-digest') return moderationDigestEmail(deps.branding, mail);
  if (mail.kind === 'account-notice') {
    return accountNoticeEmail(deps.branding, { fullName: mail.fullName, notice: mail.notice, newEmail: mail.newEmail });
  }
  const link = `${deps.branding.publicUrl}/api/user/verify-email?token=${encodeURIComponent(deps.sealer.open(mail.sealedToken))}`;
  return verificationEmail(deps.branding, { fullName: mail.fullName, link, reason: mail.reason });
}
