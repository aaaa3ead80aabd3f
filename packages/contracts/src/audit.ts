import { z } from 'zod';
import { pageQuerySchema } from './users.js';

/**
 * The administrative acts the audit log records. Services record them through the platform's
 * `auditEvent` (see docs/decisions/0026-audit-log-as-outbox-events.md); the identity service stores them.
 */
export const AUDIT_ACTIONS = [
  'admin.login',
  'evidence.publish',
  'evidence.unpublish',
  'evidence.publish-all',
  'evidence.unpublish-all',
  'evidence.mark-reviewed',
  'evidence.faces-edit',
  'evidence.faces-consent',
  'evidence.edit',
  'evidence.delete',
  'evidence.export',
  'user.edit',
  'user.delete',
  'user.promote',
  'user.export',
  'appointment.import',
  'appointment.create',
  'appointment.move',
  'appointment.cancel',
  'appointment.status',
  'appointment.announce',
] as const;
export const auditActionSchema = z.enum(AUDIT_ACTIONS);
export type AuditAction = z.infer<typeof auditActionSchema>;

export const AUDIT_TARGET_TYPES = ['evidence', 'user', 'archive', 'appointment'] as const;
export const auditTargetTypeSchema = z.enum(AUDIT_TARGET_TYPES);
export type AuditTargetType = z.infer<typeof auditTargetTypeSchema>;

/** Field values before or after an act (only the fields it changed or that identify the target). */
const snapshotSchema = z.record(z.string(), z.unknown());

/** The data of an `audit.recorded` event (topic `audit.entries`). */
export const auditRecordedData = z.object({
  actor: z.object({
    id: z.string().nullable().meta({ description: 'The administrator; null for the ops command' }),
    username: z.string().nullable(),
  }),
  action: auditActionSchema,
  target: z.object({
    type: auditTargetTypeSchema,
    id: z.string().nullable().meta({ description: 'Evidence or user id; null for acts on the whole archive' }),
    label: z.string().nullable().meta({ description: 'A title or username to read in the log' }),
  }),
  /**
   * The participant the entry is about (the target user, or the author of the target item); when
   * that account is deleted, the entry keeps what happened but loses everything identifying them.
   */
  subjectUserId: z.string().nullable(),
  before: snapshotSchema.nullable(),
  after: snapshotSchema.nullable(),
  details: snapshotSchema.nullable().meta({ description: 'Anything else: counts, filters of an export' }),
});
export type AuditRecordedData = z.infer<typeof auditRecordedData>;

export const auditEntrySchema = z
  .object({
    id: z.string(),
    at: z.string().meta({ description: 'When the act happened (ISO 8601)' }),
    actor_id: z.string().nullable(),
    actor_username: z.string().nullable().meta({ description: '"ops command" for the command line; null once erased' }),
    action: auditActionSchema,
    target_type: auditTargetTypeSchema,
    target_id: z.string().nullable(),
    target_label: z.string().nullable(),
    before: snapshotSchema.nullable(),
    after: snapshotSchema.nullable(),
    details: snapshotSchema.nullable(),
    erased: z.boolean().meta({ description: 'A participant this entry concerned was deleted: their identifiers were removed' }),
  })
  .meta({ id: 'AuditEntry' });
export type AuditEntry = z.infer<typeof auditEntrySchema>;

const isoTime = (what: string) =>
  z
    .string()
    .max(40)
    .refine((value) => !Number.isNaN(Date.parse(value)), `${what} must be a date and time, e.g. 2026-07-01T12:00:00Z`)
    .optional()
    .meta({ description: `${what} (ISO 8601)` });

export const auditFilterSchema = z.object({
  actor: z.string().trim().min(1).max(100).optional().meta({ description: "The administrator's id or username" }),
  action: auditActionSchema.optional(),
  target: z.string().trim().min(1).max(100).optional().meta({ description: 'An evidence or user id' }),
  from: isoTime('From'),
  to: isoTime('To'),
});
export type AuditFilter = z.infer<typeof auditFilterSchema>;

export const auditQuerySchema = pageQuerySchema.extend(auditFilterSchema.shape);
export type AuditQuery = z.infer<typeof auditQuerySchema>;
