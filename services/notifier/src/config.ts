import { z } from 'zod';
import { parseReminderOffsets } from '@portal/contracts';
import { ConfigError, parseEnv, sharedSecretEnv, sharedSecretOf, type SharedSecret, type TwilioSettings } from '@portal/platform';

export interface NotifierSettings {
  dataDir: string;
  /** INTERNAL_SECRET signs and seals; INTERNAL_SECRET_PREVIOUS, during a rotation, is accepted when checking. */
  internalSecret: SharedSecret;
  /** SMTP server URL; without it every e-mail is written to DATA_DIR/outbox as an .eml file. */
  smtpUrl: string | null;
  from: string;
  productName: string;
  /** The portal's public address, for absolute links in e-mails. */
  publicUrl: string;
  /** Where identity listens (appointments are read from it when their messages are sent). */
  identityUrl: string;
  /** APPOINTMENT_REMINDERS, largest offset first. */
  reminders: { label: string; ms: number }[];
  /** Twilio, when TWILIO_ACCOUNT_SID is set; else text messages are written to DATA_DIR/sms-outbox. */
  twilio: TwilioSettings | null;
  /** MAIL_RETRY_HOURS: how long an e-mail is tried again while the mail server is away (ms). */
  mailRetryMs: number;
}

const notifierEnvSchema = z.object({
  DATA_DIR: z.string().default('./data'),
  ...sharedSecretEnv,
  SMTP_URL: z
    .string()
    .regex(/^smtps?:\/\//, 'must be an smtp:// or smtps:// URL')
    .optional(),
  MAIL_FROM: z.string().optional(),
  PRODUCT_NAME: z.string().default('The Investigation'),
  PUBLIC_URL: z.url({ error: 'must be the portal address, e.g. https://portal.example.org' }).optional(),
  /** The port the portal (its gateway) listens on: without PUBLIC_URL, links point at it on localhost. */
  PORT: z
    .string()
    .regex(/^\d{1,5}$/)
    .optional()
    .catch(undefined),
  IDENTITY_URL: z.url({ error: 'must be a URL such as http://identity:4001' }).default('http://127.0.0.1:4001'),
  APPOINTMENT_REMINDERS: z.string().default('24h,2h'),
  TWILIO_ACCOUNT_SID: z
    .string()
    .regex(/^AC[0-9a-fA-F]{32}$/, 'must be an account SID (AC followed by 32 hex digits)')
    .optional(),
  TWILIO_AUTH_TOKEN: z.string().min(1).optional(),
  TWILIO_FROM: z
    .string()
    .regex(/^\+[1-9]\d{6,14}$/, 'must be the sending number in E.164, e.g. +12025550100')
    .optional(),
  TWILIO_MESSAGING_SERVICE_SID: z
    .string()
    .regex(/^MG[0-9a-fA-F]{32}$/, 'must be a Messaging Service SID (MG followed by 32 hex digits)')
    .optional(),
  TWILIO_API_BASE_URL: z.url().optional(),
  MAIL_RETRY_HOURS: z.coerce
    .number()
    .positive()
    .max(24 * 14)
    .default(24),
});

/** PUBLIC_URL's default: the portal on this machine, at the port it listens on (PORT, else 8080). */
export function defaultPublicUrl(port: string | undefined): string {
  return `http://localhost:${port && Number(port) > 0 ? Number(port) : 8080}`;
}

export function notifierSettingsFromEnv(env: NodeJS.ProcessEnv = process.env): NotifierSettings {
  const parsed = parseEnv(notifierEnvSchema, env);
  const publicUrl = parsed.PUBLIC_URL ?? defaultPublicUrl(parsed.PORT);
  const host = new URL(publicUrl).hostname;
  return {
    dataDir: parsed.DATA_DIR,
    internalSecret: sharedSecretOf(parsed),
    smtpUrl: parsed.SMTP_URL ?? null,
    from:
      parsed.MAIL_FROM ?? `"${parsed.PRODUCT_NAME.replace(/"/g, '')}" <no-reply@${host.includes('.') ? host : 'localhost.localdomain'}>`,
    productName: parsed.PRODUCT_NAME,
    publicUrl: publicUrl.replace(/\/+$/, ''),
    identityUrl: parsed.IDENTITY_URL,
    reminders: reminderOffsets(parsed.APPOINTMENT_REMINDERS),
    twilio: twilioSettings(parsed),
    mailRetryMs: Math.round(parsed.MAIL_RETRY_HOURS * 3600_000),
  };
}

function reminderOffsets(value: string): { label: string; ms: number }[] {
  try {
    return parseReminderOffsets(value);
  } catch (error) {
    throw new ConfigError(`APPOINTMENT_REMINDERS ${(error as Error).message}`);
  }
}

function twilioSettings(parsed: z.infer<typeof notifierEnvSchema>): TwilioSettings | null {
  if (!parsed.TWILIO_ACCOUNT_SID) return null;
  if (!parsed.TWILIO_AUTH_TOKEN) throw new ConfigError('TWILIO_ACCOUNT_SID needs TWILIO_AUTH_TOKEN');
  if (!parsed.TWILIO_FROM && !parsed.TWILIO_MESSAGING_SERVICE_SID)
    throw new ConfigError('TWILIO_ACCOUNT_SID needs TWILIO_FROM or TWILIO_MESSAGING_SERVICE_SID');
  return {
    accountSid: parsed.TWILIO_ACCOUNT_SID,
    authToken: parsed.TWILIO_AUTH_TOKEN,
    ...(parsed.TWILIO_FROM ? { from: parsed.TWILIO_FROM } : {}),
    ...(parsed.TWILIO_MESSAGING_SERVICE_SID ? { messagingServiceSid: parsed.TWILIO_MESSAGING_SERVICE_SID } : {}),
    ...(parsed.TWILIO_API_BASE_URL ? { apiBaseUrl: parsed.TWILIO_API_BASE_URL } : {}),
  };
}
