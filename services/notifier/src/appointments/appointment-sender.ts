import {
  SmsRefusedError,
  classifyFailure,
  holdWhileAway,
  postponement,
  type ActiveJob,
  type Backoff,
  type Logger,
  type Mailer,
  type SmsSender,
} from '@portal/platform';
import { whyNoText, type DeliveryState } from '@portal/contracts';
import type { Branding } from '../emails/templates.js';
import { deliveryKey, type AppointmentJob } from './appointment-job.js';
import type { AppointmentDirectory } from './identity-client.js';
import { appointmentEmail, appointmentSms } from './messages.js';

export interface AppointmentSenderDeps {
  directory: AppointmentDirectory;
  mailer: Mailer;
  sms: SmsSender;
  branding: Branding;
  logger: Logger;
  clock: () => number;
  /** Tries per job (the queue's attempts): the last failure is recorded as failed for administrators. */
  attempts: number;
  /** Waits while the mail server or the text provider is away. */
  retryBackoff: Backoff;
}

export type SendOutcome = { sent: string } | { skipped: string } | { notSent: string } | { failed: string };

/**
 * Sends one appointment message, after checking with identity, at sending time, that it is still
 * due: the appointment exists and is at the job's version (moved or cancelled: nothing is sent),
 * the message was not sent already (a job run twice sends once), it has not started (nothing is
 * sent after the start), and for a text that the participant has a number that can be texted and
 * did not turn text reminders off. What became of it is recorded on the appointment (the call
 * sheet shows it): sent, not sent (and why), failed once the tries are used up, or "retrying"
 * while the mail server or the text provider is away: it is then tried again, with no try counted,
 * until the appointment's start, and recorded as not sent if the provider was still away then
 * (never sent late).
 */
export function appointmentSender(deps: AppointmentSenderDeps): (job: ActiveJob<AppointmentJob>) => Promise<SendOutcome> {
  // Identity away (the recipient cannot be read, the outcome not recorded) puts it off too.
  return holdWhileAway(sendOnce(deps), { logger: deps.logger, backoff: deps.retryBackoff });
}

function sendOnce(deps: AppointmentSenderDeps) {
  return async (job: ActiveJob<AppointmentJob>): Promise<SendOutcome> => {
    const data = job.data;
    const key = deliveryKey(data);
    const recipient = await deps.directory.recipient(data.appointmentId);
    if (!recipient) return { skipped: 'the appointment is cancelled' };
    if (data.kind !== 'announcement' && recipient.version !== data.version) return { skipped: 'the appointment was moved' };
    const version = recipient.version;
    if (recipient.sent.includes(key)) return { skipped: 'already sent' };
    const report = (state: DeliveryState, reason: string | null) =>
      deps.directory.report(data.appointmentId, {
        version,
        key,
        kind: data.kind,
        offset: data.offset,
        channel: data.channel,
        state,
        reason,
      });
    const start = Date.parse(recipient.start);
    const provider = data.channel === 'email' ? 'the mail server' : 'the text provider';
    const tooLate = `the appointment started before ${provider} could be reached`;
    if (data.kind !== 'announcement' && deps.clock() >= start) {
      // Put off while the provider was away, until the start: dropped, never sent late.
      const reason = job.postponements > 0 ? tooLate : 'the appointment had started';
      await report('not-sent', reason);
      return { notSent: reason };
    }
    if (data.channel === 'sms') {
      const reason = whyNoText(recipient);
      if (reason) {
        await report('not-sent', reason);
        return { notSent: reason };
      }
    }
    const messageId = `${job.id}@portal.invalid`;
    try {
      if (data.channel === 'email') {
        await deps.mailer.send({
          to: recipient.email,
          ...appointmentEmail(deps.branding, data, recipient),
          messageId,
          recipientId: recipient.appointmentId,
        });
      } else {
        await deps.sms.send({
          to: recipient.phone!,
          body: appointmentSms(deps.branding, data, recipient),
          messageId: job.id,
          recipientId: recipient.appointmentId,
        });
      }
    } catch (error) {
      const reason = error instanceof Error ? error.message : String(error);
      const failure = classifyFailure(error);
      if (failure.kind === 'dependency') {
        // The provider is away: tried again, no try counted, until the appointment's start.
        const later = postponement(job, failure, { deadline: start, backoff: deps.retryBackoff, now: deps.clock() });
        if (!later) {
          await report('not-sent', tooLate);
          return { notSent: tooLate };
        }
        await report(
          'retrying',
          `${provider} is not answering (${failure.reason.slice(0, 300)}); tried again until the appointment's start`,
        );
        throw later;
      }
      if (error instanceof SmsRefusedError || job.attemptsMade + 1 >= deps.attempts) {
        await report('failed', reason.slice(0, 500));
        deps.logger.error({ jobId: job.id, channel: data.channel, err: error }, 'appointment message failed for good');
        if (error instanceof SmsRefusedError) return { failed: reason };
      }
      throw error;
    }
    await report('sent', null);
    deps.logger.info({ jobId: job.id, kind: data.kind, channel: data.channel, attempt: job.attemptsMade + 1 }, 'appointment message sent');
    return { sent: key };
  };
}
