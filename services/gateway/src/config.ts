import { z } from 'zod';
import {
  DEFAULT_LIBRARY_ENTRYWAY,
  DEFAULT_PUBLIC_LOCATION_DECIMALS,
  DEFAULT_STREET_CORNER,
  DEFAULT_TERMS_TEXT,
  DEFAULT_TERMS_VERSION,
  type PublicConfig,
} from '@portal/contracts';
import { envBoolean, envBytes, envPort, parseEnv, sharedSecretEnv, sharedSecretOf, type SharedSecret } from '@portal/platform';
import type { UploadLimits } from './http/plugins/upload-guard.js';

/** false: no proxy; a number: that many proxies in front; a list: proxies at these addresses or networks (CIDR). */
export type TrustProxy = false | number | string[];

const PROXY_NETWORK = /^(loopback|linklocal|uniquelocal|[0-9a-fA-F:.]+(\/\d{1,3})?)$/;

/**
 * TRUST_PROXY as fastify and Express read it, with a safe meaning for `true`: one hop, the proxy
 * right in front (an ingress, a load balancer), whose own X-Forwarded-For entry is believed and
 * nothing a client wrote to the left of it. `true` meant "every hop" before, which made the
 * left-most address (the client's own choice) the one every limit counts.
 */
export const envTrustProxy = z
  .string()
  .trim()
  .transform((value, context): TrustProxy => {
    const lower = value.toLowerCase();
    if (['', 'false', '0', 'no'].includes(lower)) return false;
    if (['true', 'yes'].includes(lower)) return 1;
    if (/^\d+$/.test(lower)) return Math.min(Number(lower), 32);
    const networks = value
      .split(',')
      .map((part) => part.trim())
      .filter(Boolean);
    const invalid = networks.find((network) => !PROXY_NETWORK.test(network));
    if (invalid !== undefined) {
      context.addIssue({
        code: 'custom',
        message: `must be false, true (one proxy), a number of proxies, or addresses/networks such as 10.0.0.0/8 (not "${invalid}")`,
      });
      return z.NEVER;
    }
    return networks;
  });

export interface GatewaySettings {
  host: string;
  port: number;
  /** Base URL of the identity service. */
  identityUrl: string;
  /** Base URL of the evidence service. */
  evidenceUrl: string;
  /** Folder of the built web app (index.html and assets/). */
  webDist: string;
  /** INTERNAL_SECRET signs and seals; INTERNAL_SECRET_PREVIOUS, during a rotation, is accepted when checking. */
  internalSecret: SharedSecret;
  cookieName: string;
  /** How long a resolved session is trusted without asking identity again (ms). */
  sessionCacheTtlMs: number;
  /** Requests per minute per client address on /api (0 turns the limit off). */
  rateLimitPerMinute: number;
  /** How long public API answers (archive pages) are kept in memory at most (ms; 0 turns the cache off). */
  publicCacheTtlMs: number;
  /**
   * Signed-in reads (GET and HEAD without a body) proxied in front of fastify with what the full
   * path would do (http/proxy-fast-path.ts); false sends every request through fastify.
   */
  proxyFastPath: boolean;
  /**
   * Which proxies in front may say who the client is (X-Forwarded-For, -Proto, -Host): none
   * (false), the nearest N hops, or the proxies at these addresses or networks.
   */
  trustProxy: TrustProxy;
  /** Request bodies and uploads: the same file limits as the services', refused here before a byte is read. */
  uploads: UploadLimits;
  publicConfig: PublicConfig;
  /** The installable app's name on a home screen (PRODUCT_SHORT_NAME), else made from PRODUCT_NAME in whole words. */
  productShortName: string | null;
}

const gatewayEnvSchema = z.object({
  HOST: z.string().default('0.0.0.0'),
  PORT: envPort.default(8080),
  IDENTITY_URL: z.url({ error: 'must be a URL such as http://identity:4001' }).default('http://127.0.0.1:4001'),
  EVIDENCE_URL: z.url({ error: 'must be a URL such as http://evidence:4002' }).default('http://127.0.0.1:4002'),
  WEB_DIST: z.string().default('web/dist'),
  ...sharedSecretEnv,
  SESSION_COOKIE_NAME: z
    .string()
    .regex(/^[A-Za-z0-9_-]+$/)
    .default('portal_session'),
  SESSION_CACHE_TTL_MS: z.coerce.number().int().min(0).default(10_000),
  RATE_LIMIT_PER_MINUTE: z.coerce.number().int().min(0).default(3000),
  PUBLIC_CACHE_TTL_MS: z.coerce.number().int().min(0).max(60_000).default(2000),
  TRUST_PROXY: envTrustProxy.default(false),
  GATEWAY_PROXY_FAST_PATH: envBoolean.default(true),
  // The services' own limits (evidence and identity read the same variables, with the same defaults).
  EVIDENCE_IMAGE_MAX_BYTES: envBytes.default(30 * 1024 ** 2),
  EVIDENCE_VIDEO_MAX_BYTES: envBytes.default(1024 ** 3),
  EVIDENCE_AUDIO_MAX_BYTES: envBytes.default(200 * 1024 ** 2),
  PHOTO_MAX_BYTES: envBytes.default(15 * 1024 * 1024),
  UPLOAD_IDLE_TIMEOUT_MS: z.coerce.number().int().min(100).default(60_000),
  UPLOAD_CONCURRENT_PER_PARTICIPANT: z.coerce.number().int().min(0).default(4),
  PRODUCT_SHORT_NAME: z.string().trim().min(1).max(30).optional(),
});

const publicConfigEnvSchema = z.object({
  PRODUCT_NAME: z.string().default('The Investigation'),
  STREET_CORNER: z.string().default(DEFAULT_STREET_CORNER),
  LIBRARY_ENTRYWAY: z.string().default(DEFAULT_LIBRARY_ENTRYWAY),
  ARRIVE_EARLY: z.string().default('10 minutes early'),
  PUBLIC_AFTER_DATE: z.string().default('the end of the investigation'),
  SPY_ON_URL: z.string().default('https://example.org/'),
  TICKET_URL: z.string().default('https://example.org/tickets'),
  ONBOARDING_VIDEO_URL: z.string().default('/onboarding/onboarding.mp4'),
  ONBOARDING_CAPTIONS_URL: z.string().default('/onboarding/onboarding.en.vtt'),
  TUTORIAL_VIDEO_URL: z.string().optional(),
  TUTORIAL_CAPTIONS_URL: z.string().optional(),
  // The evidence service rounds public positions; the app says how much next to "Add my location".
  PUBLIC_LOCATION_DECIMALS: z.coerce.number().int().min(0).max(5).default(DEFAULT_PUBLIC_LOCATION_DECIMALS),
  TERMS_VERSION: z.string().max(100).default(DEFAULT_TERMS_VERSION),
  TERMS_TEXT: z.string().max(20_000).optional(),
  TERMS_URL: z.string().optional(),
});

/** The event-specific words and links, from the environment (documented in the README). */
export function publicConfigFromEnv(env: NodeJS.ProcessEnv = process.env): PublicConfig {
  const parsed = parseEnv(publicConfigEnvSchema, env);
  const onboardingVideo = { url: parsed.ONBOARDING_VIDEO_URL, captionsUrl: parsed.ONBOARDING_CAPTIONS_URL ?? null };
  return {
    productName: parsed.PRODUCT_NAME,
    streetCorner: parsed.STREET_CORNER,
    libraryEntryway: parsed.LIBRARY_ENTRYWAY,
    arriveEarly: parsed.ARRIVE_EARLY,
    publicAfterDate: parsed.PUBLIC_AFTER_DATE,
    spyOnUrl: parsed.SPY_ON_URL,
    ticketUrl: parsed.TICKET_URL,
    publicLocationDecimals: parsed.PUBLIC_LOCATION_DECIMALS,
    onboardingVideo,
    tutorialVideo: parsed.TUTORIAL_VIDEO_URL
      ? { url: parsed.TUTORIAL_VIDEO_URL, captionsUrl: parsed.TUTORIAL_CAPTIONS_URL ?? null }
      : onboardingVideo,
    // Without TERMS_TEXT and TERMS_URL, the default words (with a URL alone, none: the link says it all).
    terms: {
      version: parsed.TERMS_VERSION,
      text: parsed.TERMS_TEXT ?? (parsed.TERMS_URL ? null : DEFAULT_TERMS_TEXT),
      url: parsed.TERMS_URL ?? null,
    },
  };
}

export function gatewaySettingsFromEnv(env: NodeJS.ProcessEnv = process.env): GatewaySettings {
  const parsed = parseEnv(gatewayEnvSchema, env);
  return {
    host: parsed.HOST,
    port: parsed.PORT,
    identityUrl: parsed.IDENTITY_URL,
    evidenceUrl: parsed.EVIDENCE_URL,
    webDist: parsed.WEB_DIST,
    internalSecret: sharedSecretOf(parsed),
    cookieName: parsed.SESSION_COOKIE_NAME,
    sessionCacheTtlMs: parsed.SESSION_CACHE_TTL_MS,
    rateLimitPerMinute: parsed.RATE_LIMIT_PER_MINUTE,
    publicCacheTtlMs: parsed.PUBLIC_CACHE_TTL_MS,
    proxyFastPath: parsed.GATEWAY_PROXY_FAST_PATH,
    trustProxy: parsed.TRUST_PROXY,
    uploads: {
      evidenceMaxBytes: Math.max(parsed.EVIDENCE_IMAGE_MAX_BYTES, parsed.EVIDENCE_VIDEO_MAX_BYTES, parsed.EVIDENCE_AUDIO_MAX_BYTES),
      photoMaxBytes: parsed.PHOTO_MAX_BYTES,
      idleTimeoutMs: parsed.UPLOAD_IDLE_TIMEOUT_MS,
      concurrentPerParticipant: parsed.UPLOAD_CONCURRENT_PER_PARTICIPANT,
    },
    publicConfig: publicConfigFromEnv(env),
    productShortName: parsed.PRODUCT_SHORT_NAME ?? null,
  };
}
