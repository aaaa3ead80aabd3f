import { z } from 'zod';
import { VERIFICATION_REASONS, postedCountsSchema } from '@portal/contracts';

/**
 * Until when the e-mail is worth sending (ISO): while the mail server is away it is tried again,
 * with no try counted, until then (MAIL_RETRY_HOURS after its event; a reset code's expiry).
 * Jobs queued by an earlier release have none: their tries are counted as before.
 */
const sendBy = z.string().optional();

/** One e-mail to send, as kept in the mail queue. Secrets inside stay sealed until sending. */
export const mailJobSchema = z.discriminatedUnion('kind', [
  z.object({
    kind: z.literal('reset-code'),
    eventId: z.string(),
    sendBy,
    /** The account it is for: its mail is forgotten when the account is deleted. */
    userId: z.string().optional(),
    to: z.string(),
    fullName: z.string(),
    sealedCode: z.string(),
    expiresAt: z.string(),
  }),
  z.object({
    kind: z.literal('verify-email'),
    eventId: z.string(),
    sendBy,
    userId: z.string().optional(),
    to: z.string(),
    fullName: z.string(),
    sealedToken: z.string(),
    reason: z.enum(VERIFICATION_REASONS),
  }),
  z.object({
    kind: z.literal('account-notice'),
    eventId: z.string(),
    sendBy,
    userId: z.string().optional(),
    to: z.string(),
    fullName: z.string(),
    notice: z.enum(['email-changed', 'password-changed']),
    /** The address the account moved to (an e-mail change). */
    newEmail: z.string().optional(),
  }),
  z.object({
    kind: z.literal('moderation-digest'),
    eventId: z.string(),
    sendBy,
    userId: z.string().optional(),
    to: z.string(),
    fullName: z.string(),
    counts: postedCountsSchema,
    since: z.string(),
    until: z.string(),
  }),
]);
export type MailJob = z.infer<typeof mailJobSchema>;

/** Every kind of e-mail the notifier sends (the metrics' `kind` label). */
export const MAIL_KINDS: MailJob['kind'][] = mailJobSchema.options.map((option) => option.shape.kind.value);
