import { z } from 'zod';
import { MESSAGES } from './messages.js';
import { emailField, passwordField } from './users.js';

export const RESET_CODE_MIN = 100000;
export const RESET_CODE_MAX = 999999;

const codeField = z
  .string({ error: MESSAGES.resetCodeRequired })
  .trim()
  .regex(/^\d{6}$/, MESSAGES.resetCodeInvalid)
  .meta({ description: 'The six-digit code from the e-mail', example: '482913' });

/** The spec's client sent some bodies as arrays; the server accepts those too. */
function legacyArray<T extends z.ZodType>(schema: T, fromArray: (items: unknown[]) => unknown) {
  return z.preprocess((input) => (Array.isArray(input) ? fromArray(input) : input), schema);
}

export const checkEmailRequestSchema = z.object({ email: emailField }).meta({ id: 'CheckEmailRequest' });
export const checkEmailResponseSchema = z.object({ exists: z.boolean() }).meta({ id: 'CheckEmailResponse' });

/** POST /api/email/send: { email }, or the legacy array [code, email] whose code is ignored. */
export const sendCodeBodySchema = z
  .object({ email: emailField })
  .meta({ id: 'SendCodeRequest', description: 'A code sent by a client is ignored: the server makes its own' });
export const sendCodeRequestSchema = legacyArray(sendCodeBodySchema, (items) => ({
  email: items.find((item) => typeof item === 'string' && item.includes('@')),
}));

/** PUT /api/email/reset-code: a fresh code ('request another code'). A code in the body is ignored. */
export const resendCodeRequestSchema = z.object({ email: emailField }).meta({ id: 'ResendCodeRequest' });

export const checkCodeRequestSchema = z.object({ email: emailField, code: codeField }).meta({ id: 'CheckCodeRequest' });
export const checkCodeResponseSchema = z.object({ codeMatches: z.boolean() }).meta({ id: 'CheckCodeResponse' });

/** PUT /api/user/passwordupdated: { email, code, password }, or that object inside an array. */
export const passwordUpdateBodySchema = z
  .object({ email: emailField, code: codeField, password: passwordField })
  .meta({ id: 'PasswordUpdateRequest' });
export const passwordUpdateRequestSchema = legacyArray(passwordUpdateBodySchema, (items) => items[0]);

/** The new-password screen in the browser. */
export const newPasswordFormSchema = z
  .object({
    password: z.string().min(1, MESSAGES.resetPasswordRequired).pipe(passwordField),
    confirm_password: z.string().min(1, MESSAGES.resetPasswordRequired),
  })
  .refine((form) => form.password === form.confirm_password, {
    path: ['confirm_password'],
    message: MESSAGES.resetPasswordsDoNotMatch,
  });

// --- events ---------------------------------------------------------------------------------

export const passwordResetRequestedData = z.object({
  userId: z.string(),
  email: z.string(),
  username: z.string(),
  full_name: z.string(),
  /** The code, sealed (AES-GCM) with the services' shared secret: never plaintext in the log. */
  sealedCode: z.string(),
  expiresAt: z.string(),
});
export type PasswordResetRequestedData = z.infer<typeof passwordResetRequestedData>;

/** Why a confirmation link is sent. */
export const VERIFICATION_REASONS = ['registered', 'email-changed', 'resent'] as const;

export const emailVerificationRequestedData = z.object({
  userId: z.string(),
  email: z.string(),
  username: z.string(),
  full_name: z.string(),
  /** The link token, sealed like the reset code. */
  sealedToken: z.string(),
  /** resent: the person asked for a new link (the earlier one died: 7 days, or a rotated secret). */
  reason: z.enum(VERIFICATION_REASONS),
});
export type EmailVerificationRequestedData = z.infer<typeof emailVerificationRequestedData>;

/**
 * A notice to the account's owner about a change to the account: the e-mail address changed
 * (sent to the old address, which names the new one) or the password changed.
 */
export const accountNoticeData = z.discriminatedUnion('notice', [
  z.object({ notice: z.literal('email-changed'), userId: z.string(), email: z.string(), full_name: z.string(), newEmail: z.string() }),
  z.object({ notice: z.literal('password-changed'), userId: z.string(), email: z.string(), full_name: z.string() }),
]);
export type AccountNoticeData = z.infer<typeof accountNoticeData>;
