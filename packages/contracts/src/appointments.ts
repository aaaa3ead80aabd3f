import { z } from 'zod';
import { emailField } from './users.js';

/**
 * Appointments: one per ticket holder (by e-mail address), imported from the box office or set by
 * an administrator; the participant sees their own, administrators see a day's call sheet.
 */

export const APPOINTMENT_STATUSES = ['waiting', 'called', 'arrived', 'no-show'] as const;
export const appointmentStatusSchema = z.enum(APPOINTMENT_STATUSES, {
  error: `status must be one of: ${APPOINTMENT_STATUSES.join(', ')}`,
});
export type AppointmentStatus = z.infer<typeof appointmentStatusSchema>;

export const MESSAGE_CHANNELS = ['email', 'sms'] as const;
export const messageChannelSchema = z.enum(MESSAGE_CHANNELS);
export type MessageChannel = z.infer<typeof messageChannelSchema>;

/**
 * What became of one message of an appointment (a confirmation or a reminder on one channel):
 * `retrying` while the mail server or the text provider is away (tried again until the start),
 * then `sent`, or `not-sent` with the reason.
 */
export const DELIVERY_STATES = ['sent', 'failed', 'not-sent', 'retrying'] as const;
export const deliveryStateSchema = z.enum(DELIVERY_STATES);
export type DeliveryState = z.infer<typeof deliveryStateSchema>;

const dateOnly = z
  .string({ error: 'date must be a day, e.g. 2026-07-01' })
  .regex(/^\d{4}-\d{2}-\d{2}$/, 'date must be a day, e.g. 2026-07-01')
  .refine(
    (value) => !Number.isNaN(Date.parse(`${value}T00:00:00Z`)) && new Date(`${value}T00:00:00Z`).toISOString().startsWith(value),
    'date must be a real day, e.g. 2026-07-01',
  )
  .meta({ description: 'A day (YYYY-MM-DD) in EVENT_TIMEZONE', example: '2026-07-01' });

/**
 * A start time as people write it: ISO 8601 with or without an offset (without one it is read in
 * EVENT_TIMEZONE), e.g. 2026-07-01T18:30 or 2026-07-01 18:30 or 2026-07-01T18:30:00+02:00.
 */
export const startField = z
  .string({ error: 'start must be a date and time, e.g. 2026-07-01T18:30' })
  .trim()
  .min(1, 'start must be a date and time, e.g. 2026-07-01T18:30')
  .max(40, 'start must be a date and time, e.g. 2026-07-01T18:30')
  .meta({ description: 'Date and time (ISO 8601); without an offset it is read in EVENT_TIMEZONE', example: '2026-07-01T18:30' });

const placeField = z
  .string()
  .trim()
  .max(200, 'place must be at most 200 characters')
  .meta({ description: 'Where to stand (a street corner)' });
const noteField = z.string().trim().max(500, 'note must be at most 500 characters');
const phoneInput = z
  .string()
  .trim()
  .max(40, 'phone must be at most 40 characters')
  .meta({ description: "A phone number; without a country code it is read in SMS_DEFAULT_REGION. Empty: the account's number" });

/** One delivery record of an appointment's messages. */
export const appointmentDeliverySchema = z
  .object({
    key: z.string().meta({ description: '"confirmation" or the reminder offset (e.g. 24h), then ":" and the channel' }),
    kind: z.enum(['confirmation', 'reminder', 'announcement']),
    offset: z.string().nullable().meta({ description: 'The reminder offset, e.g. 2h; null for a confirmation or announcement' }),
    channel: messageChannelSchema,
    state: deliveryStateSchema,
    at: z.string().meta({ format: 'date-time' }),
    reason: z.string().nullable().meta({ description: 'Why it was not sent or failed' }),
  })
  .meta({ id: 'AppointmentDelivery' });
export type AppointmentDelivery = z.infer<typeof appointmentDeliverySchema>;

/** GET /api/appointments/mine: the participant's own appointment. */
export const appointmentSchema = z
  .object({
    id: z.string(),
    start: z
      .string()
      .meta({ description: 'Start with its offset in the event time zone (ISO 8601)', example: '2026-07-01T18:30:00.000+02:00' }),
    time_zone: z.string().meta({ description: 'IANA name (EVENT_TIMEZONE)', example: 'Europe/Berlin' }),
    place: z.string(),
    note: z.string(),
    version: z.number().int().positive().meta({ description: 'Grows with every move' }),
  })
  .meta({ id: 'Appointment' });
export type Appointment = z.infer<typeof appointmentSchema>;

export const myAppointmentSchema = z
  .object({
    appointment: appointmentSchema.nullable(),
    sms_reminders: z.boolean().meta({ description: 'Whether text reminders are on (the profile)' }),
  })
  .meta({ id: 'MyAppointment' });
export type MyAppointment = z.infer<typeof myAppointmentSchema>;

/** An appointment as administrators see it (the call sheet, the user dialog). */
export const adminAppointmentSchema = appointmentSchema
  .extend({
    email: z.string(),
    user_id: z.string().nullable().meta({ description: 'The account, once the ticket holder registered with this address' }),
    full_name: z.string().nullable(),
    pronouns: z.string().nullable(),
    verification_photo_url: z.string().nullable(),
    phone: z.string().nullable().meta({ description: 'E.164, e.g. +12025550123; null when there is no number that can be texted' }),
    phone_problem: z
      .string()
      .nullable()
      .meta({ description: 'Why the number cannot be texted (shown on the call sheet); null when it can' }),
    sms_reminders: z.boolean(),
    status: appointmentStatusSchema,
    status_updated_at: z.string().nullable(),
    deliveries: z.array(appointmentDeliverySchema),
  })
  .meta({ id: 'AdminAppointment' });
export type AdminAppointment = z.infer<typeof adminAppointmentSchema>;

export const callSheetQuerySchema = z.object({ date: dateOnly });
export const callSheetSchema = z
  .object({
    date: z.string(),
    time_zone: z.string(),
    appointments: z.array(adminAppointmentSchema).meta({ description: 'In time order' }),
  })
  .meta({ id: 'CallSheet' });
export type CallSheet = z.infer<typeof callSheetSchema>;

/** POST /api/appointments: one appointment (an existing one of the address is moved). */
export const appointmentCreateSchema = z
  .object({
    email: emailField,
    start: startField,
    phone: phoneInput.optional(),
    place: placeField.optional(),
    note: noteField.optional(),
  })
  .meta({ id: 'AppointmentCreate' });
export type AppointmentCreate = z.infer<typeof appointmentCreateSchema>;

/** PATCH /api/appointments/{id}: move it, or change its place, note or phone. */
export const appointmentUpdateSchema = z
  .object({
    start: startField.optional(),
    phone: phoneInput.optional(),
    place: placeField.optional(),
    note: noteField.optional(),
    status: appointmentStatusSchema.optional().meta({ description: "The performers' status of the day" }),
  })
  .refine((value) => Object.values(value).some((field) => field !== undefined), 'Send at least one of start, phone, place, note, status')
  .meta({ id: 'AppointmentUpdate' });
export type AppointmentUpdate = z.infer<typeof appointmentUpdateSchema>;

export const IMPORT_REFUSALS = [
  'bad-date',
  'unknown-column',
  'duplicate',
  'missing-field',
  'bad-email',
  'bad-value',
  'in-the-past',
] as const;

/** POST /api/appointments/import: what became of each line of the CSV (the header is line 1). */
export const appointmentImportResultSchema = z
  .object({
    created: z.array(z.object({ line: z.number().int(), email: z.string(), id: z.string() })),
    updated: z.array(z.object({ line: z.number().int(), email: z.string(), id: z.string() })),
    unchanged: z.array(z.object({ line: z.number().int(), email: z.string(), id: z.string() })),
    refused: z.array(
      z.object({
        line: z.number().int(),
        reason: z.enum(IMPORT_REFUSALS),
        message: z.string().meta({ description: 'A sentence for the person who made the file' }),
      }),
    ),
  })
  .meta({ id: 'AppointmentImportResult' });
export type AppointmentImportResult = z.infer<typeof appointmentImportResultSchema>;

/** The largest CSV the import reads (a festival's ticket holders fit many times over); the gateway and identity both hold to it. */
export const APPOINTMENT_CSV_MAX_BYTES = 2 * 1024 * 1024;

export const READY_TEXTS = ['bad-weather'] as const;

/** POST /api/appointments/announce: one message to the participants of a day (or a time range of it). */
export const announceRequestSchema = z
  .object({
    date: dateOnly,
    from: z
      .string()
      .regex(/^([01]\d|2[0-3]):[0-5]\d$/, 'from must be a time of day, e.g. 18:00')
      .optional()
      .meta({ description: 'Only appointments from this time of the day' }),
    to: z
      .string()
      .regex(/^([01]\d|2[0-3]):[0-5]\d$/, 'to must be a time of day, e.g. 20:00')
      .optional()
      .meta({ description: 'Only appointments before this time of the day' }),
    message: z.string().trim().min(1, 'The message is empty').max(600, 'The message must be at most 600 characters').optional(),
    text: z
      .enum(READY_TEXTS, { error: `text must be one of: ${READY_TEXTS.join(', ')}` })
      .optional()
      .meta({ description: 'A ready text instead of message' }),
  })
  .refine((value) => (value.message === undefined) !== (value.text === undefined), {
    message: 'Send either message or text (a ready text), not both',
    path: ['message'],
  })
  .meta({ id: 'AnnounceRequest' });
export type AnnounceRequest = z.infer<typeof announceRequestSchema>;

export const announceResultSchema = z
  .object({ id: z.string(), recipients: z.number().int(), message: z.string() })
  .meta({ id: 'AnnounceResult' });
export type AnnounceResult = z.infer<typeof announceResultSchema>;

/** Topic identity.appointments: identity → notifier. Keyed by the appointment id. */
export const appointmentScheduledData = z.object({
  appointmentId: z.string(),
  version: z.number().int().positive(),
  start: z.string().meta({ description: 'UTC ISO 8601' }),
  reason: z.enum(['set', 'moved']),
});
export const appointmentCancelledData = z.object({
  appointmentId: z.string(),
  version: z.number().int().positive(),
  /** Erased with its participant: the copies of its messages go too. */
  erased: z.boolean(),
});
export const appointmentAnnouncedData = z.object({
  announcementId: z.string(),
  message: z.string(),
  /** The appointments (each at its version) whose participants get the message. */
  appointments: z.array(z.object({ appointmentId: z.string(), version: z.number().int().positive() })),
});
export type AppointmentScheduledData = z.infer<typeof appointmentScheduledData>;
export type AppointmentCancelledData = z.infer<typeof appointmentCancelledData>;
export type AppointmentAnnouncedData = z.infer<typeof appointmentAnnouncedData>;

/**
 * GET /internal/appointments/{id}/recipient (notifier → identity): what a message needs, as it is
 * at sending time. `version` is the appointment's current version: a job of another version is
 * stale and not sent.
 */
export const appointmentRecipientSchema = z.object({
  appointmentId: z.string(),
  version: z.number().int().positive(),
  start: z.string(),
  time_zone: z.string(),
  place: z.string(),
  note: z.string(),
  email: z.string(),
  user_id: z.string().nullable(),
  full_name: z.string().nullable(),
  phone: z.string().nullable(),
  phone_problem: z.string().nullable(),
  sms_reminders: z.boolean(),
  /** Keys of the messages already sent for this version (never sent twice). */
  sent: z.array(z.string()),
});
export type AppointmentRecipient = z.infer<typeof appointmentRecipientSchema>;

/** POST /internal/appointments/{id}/deliveries (notifier → identity). */
export const deliveryReportSchema = z.object({
  version: z.number().int().positive(),
  key: z.string().min(1).max(100),
  kind: z.enum(['confirmation', 'reminder', 'announcement']),
  offset: z.string().nullable(),
  channel: messageChannelSchema,
  state: deliveryStateSchema,
  reason: z.string().max(500).nullable(),
});
export type DeliveryReport = z.infer<typeof deliveryReportSchema>;

/** APPOINTMENT_REMINDERS: e.g. "24h,2h" or "10m"; answers the offsets in ms, largest first. */
export function parseReminderOffsets(value: string): { label: string; ms: number }[] {
  const offsets = value
    .split(',')
    .map((part) => part.trim())
    .filter((part) => part.length > 0)
    .map((label) => {
      const match = /^(\d+)(m|h|d)$/.exec(label);
      if (!match) throw new Error(`"${label}" is no reminder offset: write minutes, hours or days, e.g. 24h,2h or 10m`);
      const unit = { m: 60_000, h: 3600_000, d: 86_400_000 }[match[2] as 'm' | 'h' | 'd'];
      return { label, ms: Number(match[1]) * unit };
    });
  return offsets.sort((a, b) => b.ms - a.ms);
}
