import { TOPICS, moderationDigestRequestedData, passwordResetEventSchema, userEventSchema } from '@portal/contracts';
import type { EventBus, JobQueue, Logger, Mailer, Subscription } from '@portal/platform';
import type { MailJob } from '../emails/mail-job.js';

/** Mail jobs keep the event's id as their job id: the same event delivered twice queues one e-mail. */
export const mailJobId = (eventId: string) => `mail.${eventId}`;

const MAIL_JOB_OPTIONS = { attempts: 10, backoff: { type: 'exponential' as const, delay: 15_000 } };

/**
 * Turns identity's events into queued e-mails, and forgets a deleted account's e-mails: those
 * still queued (or kept as sent or failed) and the outbox's copies.
 */
export function subscribeIdentityEvents(bus: EventBus, mail: JobQueue<MailJob>, mailer: Mailer, logger: Logger): Promise<Subscription> {
  return bus.subscribe({
    groupId: 'notifier',
    topics: [TOPICS.users, TOPICS.passwordResets, TOPICS.moderation],
    handler: async (message) => {
      if (message.topic === TOPICS.moderation) {
        const digest = moderationDigestRequestedData.safeParse(message.value.data);
        if (message.value.type !== 'moderation-digest.requested' || !digest.success) {
          logger.warn({ eventId: message.value.id, type: message.value.type }, 'ignored an unknown moderation event');
          return;
        }
        const { data } = digest;
        await mail.add(
          'moderation-digest',
          {
            kind: 'moderation-digest',
            eventId: message.value.id,
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
      const reset = passwordResetEventSchema.safeParse(message.value);
      if (reset.success) {
        const { data, id } = reset.data;
        await mail.add(
          'reset-code',
          {
            kind: 'reset-code',
            eventId: id,
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
      const user = userEventSchema.safeParse(message.value);
      if (user.success && user.data.type === 'email-verification.requested') {
        const { data, id } = user.data;
        await mail.add(
          'verify-email',
          {
            kind: 'verify-email',
            eventId: id,
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
      if (user.success && user.data.type === 'account.notice') {
        const { data, id } = user.data;
        await mail.add(
          'account-notice',
          {
            kind: 'account-notice',
            eventId: id,
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
      if (user.success && user.data.type === 'user.deleted') {
        const { userId } = user.data.data;
        const jobs = await mail.removeJobs((job) => job.data.userId === userId);
        const copies = await mailer.forget(userId);
        logger.info({ userId, jobs, copies }, "forgot a deleted account's e-mail");
        return;
      }
      if (!user.success && message.topic === TOPICS.passwordResets) {
        logger.warn({ eventId: message.value.id, type: message.value.type }, 'ignored an unknown reset event');
      }
    },
  });
}
