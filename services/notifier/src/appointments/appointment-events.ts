import { TOPICS, appointmentAnnouncedData, appointmentCancelledData, appointmentScheduledData, MESSAGE_CHANNELS } from '@portal/contracts';
import type { EventBus, HealthCheck, JobOptions, JobQueue, Logger, Mailer, SmsSender, Subscription } from '@portal/platform';
import { appointmentJobId, type AppointmentJob } from './appointment-job.js';

export interface AppointmentEventDeps {
  bus: EventBus;
  queue: JobQueue<AppointmentJob>;
  mailer: Mailer;
  sms: SmsSender;
  /** APPOINTMENT_REMINDERS, largest first. */
  reminders: { label: string; ms: number }[];
  jobOptions: Pick<JobOptions, 'attempts' | 'backoff'>;
  logger: Logger;
  clock: () => number;
  /** What the handler needs (the appointment queue): a failure while it is away holds the message. */
  dependencies: HealthCheck[];
  signal?: AbortSignal;
}

export const APPOINTMENTS_GROUP = 'notifier-appointments';

/**
 * Turns identity's appointment events into queued messages: a confirmation at once and a delayed
 * job per reminder offset and channel (e-mail and text), each with a job id fixed by
 * (appointment, version, message, channel), so that an event delivered twice, or seen by two
 * notifier replicas, queues each message once. A move or cancellation removes the older
 * version's jobs (and the sender's version check catches any that ran meanwhile); an erasure
 * also forgets the outbox copies of the appointment's messages.
 */
export function subscribeAppointmentEvents(deps: AppointmentEventDeps): Promise<Subscription> {
  const { queue } = deps;
  const add = (job: AppointmentJob, delay: number) =>
    queue.add(job.kind, job, { jobId: appointmentJobId(job), ...deps.jobOptions, ...(delay > 0 ? { delay } : {}) });
  return deps.bus.subscribe({
    groupId: APPOINTMENTS_GROUP,
    topics: [TOPICS.appointments],
    dependencies: deps.dependencies,
    ...(deps.signal ? { signal: deps.signal } : {}),
    handler: async (message) => {
      const { type, data } = message.value;
      if (type === 'appointment.scheduled') {
        const scheduled = appointmentScheduledData.parse(data);
        const start = Date.parse(scheduled.start);
        const now = deps.clock();
        if (scheduled.reason === 'moved') {
          await queue.removeJobs(
            (job) =>
              job.data.appointmentId === scheduled.appointmentId &&
              job.data.kind !== 'announcement' &&
              job.data.version < scheduled.version,
          );
        }
        if (start <= now) return;
        for (const channel of MESSAGE_CHANNELS) {
          const base = { appointmentId: scheduled.appointmentId, version: scheduled.version, channel };
          await add({ ...base, kind: 'confirmation', offset: null, offsetMs: null }, 0);
          for (const reminder of deps.reminders) {
            const at = start - reminder.ms;
            // A reminder whose time has passed (an appointment set close to its start) is left out: the confirmation says it all.
            if (at <= now) continue;
            await add({ ...base, kind: 'reminder', offset: reminder.label, offsetMs: reminder.ms }, at - now);
          }
        }
        return;
      }
      if (type === 'appointment.cancelled') {
        const cancelled = appointmentCancelledData.parse(data);
        const removed = await queue.removeJobs((job) => job.data.appointmentId === cancelled.appointmentId);
        if (cancelled.erased) {
          const copies = (await deps.mailer.forget(cancelled.appointmentId)) + (await deps.sms.forget(cancelled.appointmentId));
          deps.logger.info({ appointmentId: cancelled.appointmentId, jobs: removed, copies }, "forgot an erased appointment's messages");
        }
        return;
      }
      if (type === 'appointment.announced') {
        const announced = appointmentAnnouncedData.parse(data);
        for (const { appointmentId, version } of announced.appointments) {
          for (const channel of MESSAGE_CHANNELS) {
            await add(
              {
                kind: 'announcement',
                appointmentId,
                version,
                channel,
                offset: null,
                offsetMs: null,
                announcementId: announced.announcementId,
                message: announced.message,
              },
              0,
            );
          }
        }
        return;
      }
      deps.logger.warn({ eventId: message.value.id, type }, 'ignored an unknown appointment event');
    },
  });
}
