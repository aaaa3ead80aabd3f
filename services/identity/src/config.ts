import { join } from 'node:path';
import { z } from 'zod';
import { DEFAULT_LIBRARY_ENTRYWAY, DEFAULT_STREET_CORNER, DEFAULT_TERMS_VERSION, parseReminderOffsets } from '@portal/contracts';
import { envBoolean, envBytes, envPort, parseEnv, sharedSecretEnv, sharedSecretOf, type SharedSecret } from '@portal/platform';
import type { AppointmentSettings } from './domain/appointment-service.js';
import { isTimeZone } from './domain/appointment-times.js';
import type { NewAdmin } from './domain/user-service.js';

export interface IdentitySettings {
  host: string;
  port: number;
  dataDir: string;
  /** INTERNAL_SECRET signs and seals; INTERNAL_SECRET_PREVIOUS, during a rotation, is accepted when checking. */
  internalSecret: SharedSecret;
  sessionIdleDays: number;
  cookieName: string;
  cookieSecure: 'auto' | boolean;
  photoMaxBytes: number;
  resetCodeTtlMs: number;
  /** Abuse limits on sign-in and reset routes (turn off only for load tests). */
  authRateLimits: boolean;
  /** Registrations per minute from one client address, when authRateLimits is on (0 = no limit). */
  registerRateLimitPerMinute: number;
  /** Where the evidence service listens (the participant data export asks it for their items). */
  evidenceUrl: string;
  /** The current participation terms (registration records the version a person accepted). */
  termsVersion: string;
  /** How often at most administrators get the moderator digest (ms); 0 = never. */
  moderationDigestMs: number;
  /** The first administrator, created at start when it does not exist. */
  admin?: NewAdmin;
  appointments: AppointmentSettings;
}

export const identityEnvSchema = z.object({
  IDENTITY_HOST: z.string().default('127.0.0.1'),
  IDENTITY_PORT: envPort.default(4001),
  DATA_DIR: z.string().default('./data'),
  ...sharedSecretEnv,
  SESSION_IDLE_DAYS: z.coerce.number().positive().default(14),
  SESSION_COOKIE_NAME: z
    .string()
    .regex(/^[A-Za-z0-9_-]+$/)
    .default('portal_session'),
  COOKIE_SECURE: z.enum(['auto', 'true', 'false']).default('auto'),
  PHOTO_MAX_BYTES: envBytes.default(15 * 1024 * 1024),
  RESET_CODE_TTL_MINUTES: z.coerce.number().positive().default(15),
  AUTH_RATE_LIMITS: envBoolean.default(true),
  REGISTER_RATE_LIMIT_PER_MINUTE: z.coerce.number().int().min(0).default(30),
  EVIDENCE_URL: z.url({ error: 'must be a URL such as http://evidence:4002' }).default('http://127.0.0.1:4002'),
  TERMS_VERSION: z.string().max(100).default(DEFAULT_TERMS_VERSION),
  MODERATION_DIGEST_MINUTES: z.coerce
    .number({ error: 'must be a number of minutes (0 = off)' })
    .min(0)
    .max(7 * 24 * 60)
    .default(60),
  EVENT_TIMEZONE: z.string().default('UTC').refine(isTimeZone, 'must be an IANA time zone name, e.g. Europe/Berlin or America/New_York'),
  SMS_DEFAULT_REGION: z
    .string()
    .regex(/^[A-Z]{2}$/, 'must be a two-letter country code, e.g. US or DE')
    .default('US'),
  APPOINTMENT_REMINDERS: z
    .string()
    .default('24h,2h')
    .refine((value) => {
      try {
        parseReminderOffsets(value);
        return true;
      } catch {
        return false;
      }
    }, 'must be offsets such as 24h,2h or 10m (minutes m, hours h, days d)'),
  APPOINTMENT_MINUTES: z.coerce
    .number()
    .int()
    .min(1)
    .max(24 * 60)
    .default(30),
  STREET_CORNER: z.string().default(DEFAULT_STREET_CORNER),
  LIBRARY_ENTRYWAY: z.string().default(DEFAULT_LIBRARY_ENTRYWAY),
  PRODUCT_NAME: z.string().default('The Investigation'),
  ADMIN_USERNAME: z.string().optional(),
  ADMIN_EMAIL: z.string().optional(),
  ADMIN_PASSWORD: z.string().optional(),
});

export function identitySettingsFromEnv(env: NodeJS.ProcessEnv = process.env): IdentitySettings {
  const parsed = parseEnv(identityEnvSchema, env);
  return {
    host: parsed.IDENTITY_HOST,
    port: parsed.IDENTITY_PORT,
    dataDir: parsed.DATA_DIR,
    internalSecret: sharedSecretOf(parsed),
    sessionIdleDays: parsed.SESSION_IDLE_DAYS,
    cookieName: parsed.SESSION_COOKIE_NAME,
    cookieSecure: parsed.COOKIE_SECURE === 'auto' ? 'auto' : parsed.COOKIE_SECURE === 'true',
    photoMaxBytes: parsed.PHOTO_MAX_BYTES,
    resetCodeTtlMs: parsed.RESET_CODE_TTL_MINUTES * 60_000,
    authRateLimits: parsed.AUTH_RATE_LIMITS,
    registerRateLimitPerMinute: parsed.REGISTER_RATE_LIMIT_PER_MINUTE,
    evidenceUrl: parsed.EVIDENCE_URL,
    termsVersion: parsed.TERMS_VERSION,
    moderationDigestMs: Math.round(parsed.MODERATION_DIGEST_MINUTES * 60_000),
    admin: adminFromEnv(env),
    appointments: {
      timeZone: parsed.EVENT_TIMEZONE,
      smsRegion: parsed.SMS_DEFAULT_REGION,
      defaultPlace: parsed.STREET_CORNER,
      libraryEntryway: parsed.LIBRARY_ENTRYWAY,
      productName: parsed.PRODUCT_NAME,
      alarmMinutesBefore: Math.round((parseReminderOffsets(parsed.APPOINTMENT_REMINDERS).at(-1)?.ms ?? 30 * 60_000) / 60_000),
      durationMinutes: parsed.APPOINTMENT_MINUTES,
    },
  };
}

/** ADMIN_USERNAME, ADMIN_EMAIL and ADMIN_PASSWORD together name the first administrator. */
export function adminFromEnv(env: NodeJS.ProcessEnv): NewAdmin | undefined {
  const { ADMIN_USERNAME: username, ADMIN_EMAIL: email, ADMIN_PASSWORD: password } = env;
  if (!username && !email && !password) return undefined;
  if (!username || !email || !password) {
    throw new Error('ADMIN_USERNAME, ADMIN_EMAIL and ADMIN_PASSWORD must be set together');
  }
  return { username, email, password };
}

export function identityDatabaseFile(dataDir: string): string {
  return join(dataDir, 'identity.sqlite');
}
