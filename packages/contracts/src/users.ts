import { z } from 'zod';
import { MESSAGES } from './messages.js';

import { PRONOUN_OPTIONS } from './roles.js';
import { codePointName, forbiddenInLine, usernameProblem } from './text-rules.js';

export { ROLE_ADMIN, ROLE_USER, isAdminRole, PRONOUN_OPTIONS, type Pronouns } from './roles.js';

export const PASSWORD_MIN_LENGTH = 7;
export const PASSWORD_MAX_LENGTH = 256;
export const PHONE_DIGITS = 10;

/**
 * One address, exactly one addr-spec: WHATWG HTML's "valid e-mail address" (what a browser's
 * type=email field takes; zod's `html5Email`): a dot-atom local part, a host name's labels, no
 * quoted strings, comments, display names, angle brackets, commas or semicolons, so that a mail
 * library cannot read one stored address as several recipients. The domain needs a dot, as before.
 */
const EMAIL_PATTERN = z.regexes.html5Email;
const EMAIL_DOMAIN_WITH_DOT = /@[^@]+\.[^@.]+$/;
/**
 * 3 to 30 letters of any script (each with at most two combining marks), digits, dots, dashes or
 * underscores: 'Zoë', 'José', 'Мария' as well as 'nightowl'. Checked after NFC normalisation; the
 * identity service keeps names unique by a skeleton that folds case and look-alike characters.
 */
const USERNAME_PATTERN = /^(?:[\p{L}\p{Nd}._-]\p{M}{0,2}){3,30}$/u;
const PHONE_PATTERN = /^\d{10}$/;
/**
 * What people put between the digits of a number they type ("06 3110 0548", "(555) 123 4567",
 * "555.123.4567"): spaces of any width, dots and parentheses. They are dropped before SPEC's rule
 * of 10 digits. Dashes are not: SPEC's rule says "no dashes", and its message says so; nor is a
 * '+' (a country code makes it another number).
 */
const PHONE_SEPARATORS = /[\s.()]/gu;

/** The number as typed, without the separators people put between its digits. */
export function phoneDigits(typed: string): string {
  return typed.replace(PHONE_SEPARATORS, '');
}

/**
 * A zod check that the text holds no control, line-breaking or format character (see
 * text-rules.ts): names, places and notes reach e-mails and text messages, where a line break
 * would let them write a line in the portal's name.
 */
export function oneLine(field: string) {
  return (text: string, ctx: z.core.$RefinementCtx<string>) => {
    const char = forbiddenInLine(text);
    if (char !== null)
      ctx.addIssue({
        code: 'custom',
        message: `${field} must be one line of text, without control or formatting characters (it holds ${codePointName(char)})`,
      });
  };
}

export const usernameField = z
  .string({ error: MESSAGES.registrationInput })
  .trim()
  .normalize('NFC')
  .min(1, MESSAGES.registrationInput)
  .regex(USERNAME_PATTERN, MESSAGES.usernameFormat)
  .superRefine((name, ctx) => {
    const problem = usernameProblem(name);
    if (problem) ctx.addIssue({ code: 'custom', message: problem });
  })
  .meta({ description: 'Public name; 3 to 30 letters (any script, NFC), digits, dots, dashes or underscores', example: 'nightowl' });

export const passwordField = z
  .string({ error: MESSAGES.registrationInput })
  .min(1, MESSAGES.registrationInput)
  .min(PASSWORD_MIN_LENGTH, MESSAGES.passwordTooShort)
  .max(PASSWORD_MAX_LENGTH, `Password must be at most ${PASSWORD_MAX_LENGTH} characters long`)
  .meta({ description: 'At least 7 characters', format: 'password' });

export const emailField = z
  .string({ error: MESSAGES.invalidEmail })
  .trim()
  .toLowerCase()
  .max(254, MESSAGES.invalidEmail)
  .regex(EMAIL_PATTERN, MESSAGES.invalidEmail)
  .regex(EMAIL_DOMAIN_WITH_DOT, MESSAGES.invalidEmail)
  .refine((address) => address.indexOf('@') <= 64, MESSAGES.invalidEmail)
  .meta({
    description: 'One e-mail address (an addr-spec: no display name, comma or angle brackets), stored in lower case',
    example: 'informant@example.org',
  });

export const phoneField = z
  .string({ error: MESSAGES.phoneFormat })
  .max(40, MESSAGES.phoneFormat)
  .transform(phoneDigits)
  .pipe(z.string().regex(PHONE_PATTERN, MESSAGES.phoneFormat))
  .meta({
    description: 'Exactly 10 digits, no dashes; spaces, dots and parentheses between them are dropped ("555 123 4567")',
    example: '5551234567',
  });

export const fullNameField = z
  .string({ error: MESSAGES.fullNameRequired })
  .trim()
  .min(1, MESSAGES.fullNameRequired)
  .max(100, 'Full name must be at most 100 characters long')
  .superRefine(oneLine('Full name'))
  .meta({ example: 'Ada Lovelace' });

export const pronounsField = z
  .enum(PRONOUN_OPTIONS, { error: MESSAGES.pronounsInvalid })
  .default('')
  .meta({ description: "Empty means 'Prefer not to say'" });

/** POST /api/user/register (multipart; the verification_photo file travels beside these fields). */
export const registerRequestSchema = z
  .object({
    username: usernameField,
    password: passwordField,
    email: emailField,
    phone_number: phoneField,
    full_name: fullNameField,
    pronouns: pronounsField,
    terms_version: z
      .string({ error: MESSAGES.termsRequired })
      .trim()
      .min(1, MESSAGES.termsRequired)
      .max(100, MESSAGES.termsChanged)
      .optional()
      .meta({
        description: 'The version of the participation terms the person accepted (GET /api/config: terms.version); recorded with the time',
      }),
  })
  .meta({
    id: 'RegisterRequest',
    description:
      'Registration fields. A role or usernameOrEmail sent by the client is ignored: self-registration always gets role 1. ' +
      'Without terms_version the account says the terms were "not recorded".',
  });
export type RegisterRequest = z.infer<typeof registerRequestSchema>;

/** The registration form in the browser: the request plus the two confirmation fields. */
export const registrationFormSchema = registerRequestSchema
  .extend({
    confirm_password: z.string(),
    confirm_phone_number: z.string(),
    accept_terms: z.boolean(),
  })
  .superRefine((form, ctx) => {
    if (form.password !== form.confirm_password) {
      ctx.addIssue({ code: 'custom', path: ['confirm_password'], message: MESSAGES.passwordsDoNotMatch });
    }
    if (!form.accept_terms) ctx.addIssue({ code: 'custom', path: ['accept_terms'], message: MESSAGES.termsRequired });
    if (form.phone_number !== phoneDigits(form.confirm_phone_number)) {
      ctx.addIssue({ code: 'custom', path: ['confirm_phone_number'], message: MESSAGES.phonesDoNotMatch });
    }
  });
export type RegistrationForm = z.input<typeof registrationFormSchema>;

export const loginRequestSchema = z
  .object({
    username: z
      .string({ error: MESSAGES.loginInput })
      .trim()
      .min(1, MESSAGES.loginInput)
      .max(254, MESSAGES.loginMismatch)
      .meta({ description: 'Username or e-mail address' }),
    password: z.string({ error: MESSAGES.loginInput }).min(1, MESSAGES.loginInput).max(PASSWORD_MAX_LENGTH, MESSAGES.loginMismatch),
  })
  .meta({ id: 'LoginRequest' });
export type LoginRequest = z.infer<typeof loginRequestSchema>;

export const checkRequestSchema = z
  .object({
    username: z.string().trim().max(254).optional(),
    email: z.string().trim().toLowerCase().max(254).optional(),
  })
  .meta({ id: 'CheckRequest', description: 'Either field, or both, is checked for an existing account' });
export type CheckRequest = z.infer<typeof checkRequestSchema>;

export const checkResponseSchema = z
  .object({
    exists: z.boolean(),
    message: z.string().meta({ description: 'Empty when nothing is taken' }),
    field: z.enum(['username', 'email']).nullable().meta({ description: 'Which field is taken, if any' }),
  })
  .meta({ id: 'CheckResponse' });
export type CheckResponse = z.infer<typeof checkResponseSchema>;

export const userSchema = z
  .object({
    id: z.string(),
    username: z.string(),
    full_name: z.string(),
    email: z.string(),
    phone_number: z.string(),
    pronouns: z.string(),
    role: z.number().int().meta({ description: '1 = participant; any other value = administrator' }),
    verification_photo: z.boolean().meta({ description: 'Whether a verification photo is on file' }),
    verification_photo_AWS_URL: z
      .string()
      .nullable()
      .meta({ description: 'URL of the verification photo; only its owner and administrators can fetch it' }),
    avatar_AWS_URL: z.string().nullable().meta({ description: 'URL of the avatar (served to its owner and administrators only), or null' }),
    video_watched: z.boolean(),
    email_verified: z.boolean(),
    created_at: z.string().meta({ format: 'date-time' }),
    terms_version: z.string().nullable().meta({ description: 'The participation terms accepted at registration; null: not recorded' }),
    terms_accepted_at: z.string().nullable().meta({ description: 'When they were accepted; null: not recorded' }),
    sms_reminders: z
      .boolean()
      .meta({ description: 'Whether appointment reminders also come by text message (on unless turned off in the profile)' }),
  })
  .meta({ id: 'User' });
export type User = z.infer<typeof userSchema>;

/**
 * GET /api/session: who is signed in, asked without failing. A visitor gets 200 with user null,
 * so the app's first request logs no error in the browser; GET /api/user stays for signed-in use.
 */
export const sessionProbeSchema = z.object({ user: userSchema.nullable() }).meta({ id: 'SessionProbe' });
export type SessionProbe = z.infer<typeof sessionProbeSchema>;

/** PUT /api/evidence/user: a participant's own profile (multipart; optional avatar file beside). */
export const profileUpdateSchema = z
  .object({
    email: emailField,
    phone_number: phoneField,
    pronouns: pronounsField,
    full_name: fullNameField.optional(),
    current_password: z
      .string({ error: MESSAGES.currentPasswordRequired })
      .max(PASSWORD_MAX_LENGTH, MESSAGES.currentPasswordWrong)
      .optional()
      .meta({ description: "The account's current password: required when the e-mail address changes, ignored otherwise" }),
    sms_reminders: z
      .preprocess(
        (value) => (value === 'true' ? true : value === 'false' ? false : value),
        z.boolean({ error: 'sms_reminders must be true or false' }),
      )
      .optional()
      .meta({ description: 'Turn text reminders of the appointment on or off; left out: unchanged' }),
  })
  .meta({ id: 'ProfileUpdate' });
export type ProfileUpdate = z.infer<typeof profileUpdateSchema>;

/** PUT /api/user/admin/{id}. role and video_watched may be sent but are never changed. */
export const adminUserUpdateSchema = z
  .object({
    username: usernameField,
    email: emailField,
    phone_number: phoneField,
    full_name: fullNameField,
  })
  .meta({
    id: 'AdminUserUpdate',
    description: 'role and video_watched are accepted for compatibility and ignored: an admin edit never changes them',
  });
export type AdminUserUpdate = z.infer<typeof adminUserUpdateSchema>;

export const pageQuerySchema = z.object({
  limit: z.coerce
    .number({ error: 'limit must be a number from 1 to 200' })
    .int('limit must be a number from 1 to 200')
    .min(1, 'limit must be a number from 1 to 200')
    .max(200, 'limit must be a number from 1 to 200')
    .default(50)
    .meta({ description: 'Page size, 1 to 200 (default 50)' }),
  cursor: z.string().max(200).optional().meta({ description: 'Opaque cursor from the rel="next" Link header of the previous page' }),
});
export type PageQuery = z.infer<typeof pageQuerySchema>;

export const okResponseSchema = z.object({ ok: z.literal(true), message: z.string().optional() }).meta({ id: 'Ok' });

/** POST /api/user/verify-email/resend. */
export const resendLinkResponseSchema = z
  .object({
    ok: z.literal(true),
    sent: z.boolean().meta({ description: 'false: the address is already confirmed, nothing was sent' }),
    message: z.string(),
  })
  .meta({ id: 'ResendLinkResponse' });
export type ResendLinkResponse = z.infer<typeof resendLinkResponseSchema>;
