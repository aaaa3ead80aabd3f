import { z } from 'zod';
import { messageChannelSchema } from '@portal/contracts';

/**
 * One message of an appointment on one channel, as kept in the appointment-messages queue. It
 * carries no address or number: those are read from identity when it is sent, together with the
 * appointment's current version (a job of another version is stale and sends nothing).
 */
export const appointmentJobSchema = z.object({
  kind: z.enum(['confirmation', 'reminder', 'announcement']),
  appointmentId: z.string(),
  version: z.number().int().positive(),
  channel: messageChannelSchema,
  /** The reminder's offset label (e.g. 2h) and its ms; null otherwise. */
  offset: z.string().nullable(),
  offsetMs: z.number().int().nullable(),
  /** Announcements: their id and text. */
  announcementId: z.string().optional(),
  message: z.string().optional(),
});
export type AppointmentJob = z.infer<typeof appointmentJobSchema>;

/** The record key of a message (unique per appointment version): confirmation:email, 2h:sms, announcement-<id>:sms. */
export function deliveryKey(job: Pick<AppointmentJob, 'kind' | 'offset' | 'channel' | 'announcementId'>): string {
  const what = job.kind === 'confirmation' ? 'confirmation' : job.kind === 'reminder' ? job.offset! : `announcement-${job.announcementId!}`;
  return `${what}:${job.channel}`;
}

/** The job id: deterministic per (appointment, version, message, channel), so a message is queued once whoever queues it. */
export function appointmentJobId(
  job: Pick<AppointmentJob, 'kind' | 'offset' | 'channel' | 'announcementId' | 'appointmentId' | 'version'>,
): string {
  return job.kind === 'announcement'
    ? `appointment.${job.appointmentId}.${deliveryKey(job).replace(':', '.')}`
    : `appointment.${job.appointmentId}.v${job.version}.${deliveryKey(job).replace(':', '.')}`;
}
