import { z } from 'zod';
import { accountNoticeData, emailVerificationRequestedData, passwordResetRequestedData } from './password-reset.js';

/** One topic per aggregate; messages are keyed by the aggregate id so that one aggregate's events stay in order. */
export const TOPICS = {
  users: 'identity.users',
  sessions: 'identity.sessions',
  passwordResets: 'identity.password-resets',
  evidence: 'evidence.items',
  media: 'media.results',
  /** Administrative acts, from identity and evidence, stored by identity's audit log. */
  audit: 'audit.entries',
  /** Moderator digests due (identity → notifier). */
  moderation: 'identity.moderation',
  /** Appointments set, moved, cancelled and announcements (identity → notifier). */
  appointments: 'identity.appointments',
} as const;

export const eventEnvelopeSchema = z.object({
  id: z.string().meta({ description: 'Unique per event; consumers de-duplicate on it' }),
  type: z.string(),
  version: z.number().int().positive(),
  occurredAt: z.string(),
  key: z.string().meta({ description: 'Aggregate id; the partition key' }),
  data: z.unknown(),
  trace: z.object({ traceparent: z.string().optional(), requestId: z.string().optional() }).optional(),
});
export type EventEnvelope<T = unknown> = Omit<z.infer<typeof eventEnvelopeSchema>, 'data'> & { data: T };

export const userRegisteredData = z.object({
  userId: z.string(),
  username: z.string(),
  email: z.string(),
  full_name: z.string(),
  role: z.number().int(),
});
export const userUpdatedData = z.object({
  userId: z.string(),
  username: z.string(),
  email: z.string(),
  full_name: z.string(),
  role: z.number().int(),
  avatar_AWS_URL: z.string().nullable(),
});
export const userDeletedData = z.object({ userId: z.string() });
export const userVideoWatchedData = z.object({ userId: z.string() });
export const sessionsRevokedData = z.object({
  userId: z.string(),
  sessionIds: z.array(z.string()).nullable().meta({ description: 'Hashed session ids, or null for every session of the user' }),
  reason: z.enum(['logout', 'user-deleted', 'password-changed', 'admin']),
});

export const userEventSchema = z.discriminatedUnion('type', [
  eventEnvelopeSchema.extend({ type: z.literal('user.registered'), data: userRegisteredData }),
  eventEnvelopeSchema.extend({ type: z.literal('user.updated'), data: userUpdatedData }),
  eventEnvelopeSchema.extend({ type: z.literal('user.deleted'), data: userDeletedData }),
  eventEnvelopeSchema.extend({ type: z.literal('user.video-watched'), data: userVideoWatchedData }),
  eventEnvelopeSchema.extend({ type: z.literal('email-verification.requested'), data: emailVerificationRequestedData }),
  eventEnvelopeSchema.extend({ type: z.literal('account.notice'), data: accountNoticeData }),
]);
export type UserEvent = z.infer<typeof userEventSchema>;

export const sessionEventSchema = z.discriminatedUnion('type', [
  eventEnvelopeSchema.extend({ type: z.literal('sessions.revoked'), data: sessionsRevokedData }),
]);
export type SessionEvent = z.infer<typeof sessionEventSchema>;

export type UserRegisteredData = z.infer<typeof userRegisteredData>;
export type UserUpdatedData = z.infer<typeof userUpdatedData>;
export type UserDeletedData = z.infer<typeof userDeletedData>;
export type SessionsRevokedData = z.infer<typeof sessionsRevokedData>;

export const passwordResetEventSchema = z.discriminatedUnion('type', [
  eventEnvelopeSchema.extend({ type: z.literal('password-reset.requested'), data: passwordResetRequestedData }),
]);
export type PasswordResetEvent = z.infer<typeof passwordResetEventSchema>;
