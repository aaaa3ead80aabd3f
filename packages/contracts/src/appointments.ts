import { z } from 'zod';
import { emailField, oneLine } from './users.js';

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

/** Where to stand: one line (it is written into e-mails, text messages and calendar files). */
export const placeField = z
  .string()
  .trim()
  .max(200, 'place must be at most 200 characters')
  .superRefine(oneLine('The place'))
  .meta({ description: 'Where to stand (a street corner); one line, no control or formatting characters' });
/** The ticket holder's name as the box office gives it (the CSV's name column): one line, shown on the call sheet. */
export const boxOfficeNameField = z
  .string()
  .trim()
  .max(200, 'name must be at most 200 characters')
  .superRefine(oneLine('The name'))
  .meta({ description: "The ticket holder's name as the box office has it; one line, no control or formatting characters" });
/** A note for the participant: one line, for the same reason. */
export const noteField = z
  .string()
  .trim()
  .max(500, 'note must be at most 500 characters')
  .superRefine(oneLine('The note'))
  .meta({ description: 'A note for the participant; one line, no control or formatting characters' });
/** A phone number as a form or the box office's file gives it (read when a message is sent). */
export const appointmentPhoneField = z
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
    call_number: z.string().nullable().meta({
      description:
        "The number the performers will call: the box office's when it gave one, else the profile's (E.164 when valid, a landline that cannot take texts included, else as given); null when there is none",
      example: '+12025550123',
    }),
    call_number_readable: z.string().nullable().meta({
      description:
        'call_number spaced for reading: national form in SMS_DEFAULT_REGION, e.g. (202) 555-0123, else international, e.g. +49 30 12345678; as given when not valid',
      example: '(202) 555-0123',
    }),
    call_number_from: z
      .enum(['box-office', 'profile'])
      .nullable()
      .meta({ description: 'Whose number call_number is: the one the box office gave, or the profile’s' }),
  })
  .meta({ id: 'Appointment' });
export type Appointment = z.infer<typeof appointmentSchema>;

export const myAppointmentSchema = z
  .object({
    appointment: appointmentSchema
      .nullable()
      .meta({ description: 'null until an appointment is under the address and the address is confirmed' }),
    sms_reminders: z.boolean().meta({ description: 'Whether text reminders are on (the profile)' }),
    email_confirmed: z.boolean().meta({
      description:
        "Whether the account's address is confirmed: until it is, no appointment is shown (whether one waits under the address is not said); POST /api/user/verify-email/resend sends a new link",
    }),
  })
  .meta({ id: 'MyAppointment' });
export type MyAppointment = z.infer<typeof myAppointmentSchema>;

/** An appointment as administrators see it (the call sheet, the user dialog). */
export const ADDRESS_STATUSES = ['confirmed', 'not-confirmed', 'no-account'] as const;

export const adminAppointmentSchema = appointmentSchema
  .extend({
    address_status: z.enum(ADDRESS_STATUSES).meta({
      description:
        'confirmed: an account confirmed the address (user_id, name, photo and its number are that account’s); not-confirmed: an account has the address but has not confirmed it; no-account: nobody registered with it. Until confirmed the appointment is pending under the address: messages go to the address, only the box office’s number is used',
    }),
    email: z.string(),
    user_id: z
      .string()
      .nullable()
      .meta({ description: 'The account that has confirmed this address (the ticket holder), or null while the appointment is pending' }),
    full_name: z.string().nullable(),
    pronouns: z.string().nullable(),
    verification_photo_url: z.string().nullable(),
    name: z.string().nullable().meta({ description: "The name the box office gave (the CSV's name column); null when it gave none" }),
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

export const callSheetQuerySchema = z.object({
  date: dateOnly.optional().meta({ description: 'The day (YYYY-MM-DD); without it, today in EVENT_TIMEZONE' }),
});
export const callSheetSchema = z
  .object({
    date: z.string(),
    time_zone: z.string(),
    appointment_minutes: z
      .number()
      .int()
      .meta({ description: 'How long an appointment lasts (APPOINTMENT_MINUTES): one whose end has passed is over' }),
    appointments: z.array(adminAppointmentSchema).meta({ description: 'In time order' }),
  })
  .meta({ id: 'CallSheet' });
export type CallSheet = z.infer<typeof callSheetSchema>;

/** POST /api/appointments: one appointment (an existing one of the address is moved). */
export const appointmentCreateSchema = z
  .object({
    email: emailField,
    start: startField,
    name: boxOfficeNameField.optional(),
    phone: appointmentPhoneField.optional(),
    place: placeField.optional(),
    note: noteField.optional(),
  })
  .meta({ id: 'AppointmentCreate' });
export type AppointmentCreate = z.infer<typeof appointmentCreateSchema>;

/** PATCH /api/appointments/{id}: move it, or change its name, place, note or phone. */
export const appointmentUpdateSchema = z
  .object({
    start: startField.optional(),
    name: boxOfficeNameField.optional(),
    phone: appointmentPhoneField.optional(),
    place: placeField.optional(),
    note: noteField.optional(),
    status: appointmentStatusSchema.optional().meta({ description: "The performers' status of the day" }),
  })
  .refine(
    (value) => Object.values(value).some((field) => field !== undefined),
    'Send at least one of start, name, phone, place, note, status',
  )
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
  'ambiguous-time',
] as const;

/** `?dry_run=true` on the import and the announcement: what would happen, computed by the same code, nothing written or sent. */
export const dryRunQuerySchema = z.object({
  dry_run: z
    .enum(['true', 'false'], { error: 'dry_run must be true or false' })
    .optional()
    .meta({ description: 'true: answer what would happen, change nothing' }),
});

const importedLine = z.object({
  line: z.number().int(),
  email: z.string(),
  id: z.string().nullable().meta({ description: 'The appointment; null in a dry run for one that would be created' }),
  name: z.string().meta({ description: "The file's name column (empty when none)" }),
  start: z.string().meta({ description: "The file's start, with its offset in the event time zone (ISO 8601)" }),
});

/** POST /api/appointments/import: what became of each line of the CSV (the header is line 1). */
export const appointmentImportResultSchema = z
  .object({
    dry_run: z.boolean().meta({ description: 'true: what the import would do; nothing was written' }),
    time_zone: z.string().meta({ description: 'EVENT_TIMEZONE: where times without an offset were read' }),
    created: z.array(importedLine),
    updated: z.array(
      importedLine.extend({
        moved: z.boolean().meta({ description: 'The start changed (a new confirmation goes out); false: only place, note, phone or name' }),
        previous_start: z.string().meta({ description: 'The start before, with its offset in the event time zone' }),
      }),
    ),
    unchanged: z.array(importedLine),
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

const timeOfDay = (name: 'from' | 'to', example: string) =>
  z.string().regex(/^([01]\d|2[0-3]):[0-5]\d$/, `${name} must be a time of day, e.g. ${example}`);

const announceFields = z.object({
  date: dateOnly,
  from: timeOfDay('from', '18:00').optional().meta({ description: 'Only appointments from this time of the day' }),
  to: timeOfDay('to', '20:00').optional().meta({ description: 'Only appointments before this time of the day' }),
  message: z.string().trim().min(1, 'The message is empty').max(600, 'The message must be at most 600 characters').optional(),
  text: z
    .enum(READY_TEXTS, { error: `text must be one of: ${READY_TEXTS.join(', ')}` })
    .optional()
    .meta({ description: 'A ready text instead of message' }),
});
const notBoth = { message: 'Send either message or text (a ready text), not both', path: ['message'] };

/** POST /api/appointments/announce: one message to the participants of a day (or a time range of it). */
export const announceRequestSchema = announceFields
  .refine((value) => (value.message === undefined) !== (value.text === undefined), notBoth)
  .meta({ id: 'AnnounceRequest' });
export type AnnounceRequest = z.infer<typeof announceRequestSchema>;

/** POST /api/appointments/announce?dry_run=true: the same selection; the message may still be missing (the count alone). */
export const announcePreviewRequestSchema = announceFields
  .refine((value) => value.message === undefined || value.text === undefined, notBoth)
  .meta({ id: 'AnnouncePreviewRequest' });
export type AnnouncePreviewRequest = z.infer<typeof announcePreviewRequestSchema>;

const byTextField = z.number().int().meta({
  description:
    'How many of them get it by text too (a mobile number, texts not turned off); the others by e-mail alone. Decided as each message is (whyNoText)',
});

export const announceResultSchema = z
  .object({ id: z.string(), recipients: z.number().int(), by_text: byTextField, message: z.string() })
  .meta({ id: 'AnnounceResult' });
export type AnnounceResult = z.infer<typeof announceResultSchema>;

export const announcePreviewSchema = z
  .object({
    dry_run: z.literal(true),
    recipients: z.number().int().meta({ description: 'How many participants the announcement would reach (each by e-mail)' }),
    by_text: byTextField,
    message: z
      .string()
      .nullable()
      .meta({ description: 'The words that would be sent (a ready text written out); null when none was given' }),
    from: z.string().meta({ description: 'Start of the selection, with its offset in the event time zone' }),
    to: z.string().meta({ description: 'End of the selection (not included), with its offset in the event time zone' }),
    time_zone: z.string(),
  })
  .meta({ id: 'AnnouncePreview' });
export type AnnouncePreview = z.infer<typeof announcePreviewSchema>;

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
  /** The number the performers will call (the box office's, else the holder's), named in every message. */
  call_number: z.string().nullable(),
  /**
   * call_number spaced for reading, as the screens show it ((202) 555-0123); what messages name.
   * Optional: an identity of the release before sends none, and the messages name call_number then.
   */
  call_number_readable: z.string().nullable().optional(),
  sms_reminders: z.boolean(),
  /** Keys of the messages already sent for this version (never sent twice). */
  sent: z.array(z.string()),
});
export type AppointmentRecipient = z.infer<typeof appointmentRecipientSchema>;

/**
 * Why a recipient gets no text message, or null when one can go: the one rule for the notifier
 * (which records the reason on the call sheet) and for the count an announcement shows first.
 */
export function whyNoText(recipient: Pick<AppointmentRecipient, 'sms_reminders' | 'phone' | 'phone_problem'>): string | null {
  if (!recipient.sms_reminders) return 'the participant turned text reminders off';
  if (!recipient.phone) return recipient.phone_problem ?? 'no number that can be texted';
  return null;
}

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
