import {
  TOPICS,
  accountNoticeData,
  emailVerificationRequestedData,
  moderationDigestRequestedData,
  passwordResetRequestedData,
  userDeletedData,
} from '@portal/contracts';
import {
  parseEventData,
  type EventBus,
  type HealthCheck,
  type JobQueue,
  type Logger,
  type Mailer,
  type Subscription,
} from '@portal/platform';
import type { MailJob } from '../emails/mail-job.js';

export const NOTIFIER_GROUP = 'notifier';

/** Mail jobs keep the event's id as their job id: the same event delivered twice queues one e-mail. */
export const mailJobId = (eventId: string) => `mail.${eventId}`;

const MAIL_JOB_OPTIONS = { attempts: 10, backoff: { type: 'exponential' as const, delay: 15_000 } };

/**
 * Turns identity's events into queued e-mails, and forgets a deleted account's e-mails: those
 * still queued (or kept as sent or failed) and the outbox's copies. While the mail queue (Redis) is
 * away the consumer holds its messages (the bus's policy); an event of these types whose data
 * breaks its schema is a dead letter.
 */
export function subscribeIdentityEvents(
  bus: EventBus,
  mail: JobQueue<MailJob>,
  mailer: Mailer,
  logger: Logger,
  options: { dependencies: HealthCheck[]; signal?: AbortSignal; retryForMs: number },
): Promise<Subscription> {
  /** Until when an e-mail for this event is worth sending: retryForMs after it, or sooner (a code's expiry). */
  const sendBy = (occurredAt: string, expires?: string) =>
    new Date(
      Math.min((Date.parse(occurredAt) || Date.now()) + options.retryForMs, expires ? Date.parse(expires) || Infinity : Infinity),
    ).toISOString();
  return bus.subscribe({
    groupId: NOTIFIER_GROUP,
    topics: [TOPICS.users, TOPICS.passwordResets, TOPICS.moderation],
    dependencies: options.dependencies,
    ...(options.signal ? { signal: options.signal } : {}),
    handler: async (message) => {
      const { id, type } = message.value;
      if (message.topic === TOPICS.moderation) {
        if (type !== 'moderation-digest.requested') {
          logger.warn({ eventId: id, type }, 'ignored an unknown moderation event');
          return;
        }
        const data = parseEventData(moderationDigestRequestedData, message.value);
        await mail.add(
          'moderation-digest',
          {
            kind: 'moderation-digest',
            eventId: message.value.id,
            sendBy: sendBy(message.value.occurredAt),
            userId: data.userId,
            to: data.email,
            fullName: data.full_name,
            counts: data.counts,
            since: data.since,
            until: data.until,
          },
          { jobId: mailJobId(message.value.id), ...MAIL_JOB_OPTIONS },
        );
        return;
      }
      if (type === 'password-reset.requested') {
        const data = parseEventData(passwordResetRequestedData, message.value);
        await mail.add(
          'reset-code',
          {
            kind: 'reset-code',
            eventId: id,
            sendBy: sendBy(message.value.occurredAt, data.expiresAt),
            userId: data.userId,
            to: data.email,
            fullName: data.full_name,
            sealedCode: data.sealedCode,
            expiresAt: data.expiresAt,
          },
          { jobId: mailJobId(id), ...MAIL_JOB_OPTIONS },
        );
        return;
      }
      if (type === 'email-verification.requested') {
        const data = parseEventData(emailVerificationRequestedData, message.value);
        await mail.add(
          'verify-email',
          {
            kind: 'verify-email',
            eventId: id,
            sendBy: sendBy(message.value.occurredAt),
            userId: data.userId,
            to: data.email,
            fullName: data.full_name,
            sealedToken: data.sealedToken,
            reason: data.reason,
          },
          { jobId: mailJobId(id), ...MAIL_JOB_OPTIONS },
        );
        return;
      }
      if (type === 'account.notice') {
        const data = parseEventData(accountNoticeData, message.value);
        await mail.add(
          'account-notice',
          {
            kind: 'account-notice',
            eventId: id,
            sendBy: sendBy(message.value.occurredAt),
            userId: data.userId,
            to: data.email,
            fullName: data.full_name,
            notice: data.notice,
            ...(data.notice === 'email-changed' ? { newEmail: data.newEmail } : {}),
          },
          { jobId: mailJobId(id), ...MAIL_JOB_OPTIONS },
        );
        return;
      }
      if (type === 'user.deleted') {
        const { userId } = parseEventData(userDeletedData, message.value);
        const jobs = await mail.removeJobs((job) => job.data.userId === userId);
        const copies = await mailer.forget(userId);
        logger.info({ userId, jobs, copies }, "forgot a deleted account's e-mail");
        return;
      }
      if (message.topic === TOPICS.passwordResets) logger.warn({ eventId: id, type }, 'ignored an unknown reset event');
    },
  });
}
