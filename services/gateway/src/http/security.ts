import type { onRequestHookHandler } from 'fastify';
import helmet, { type HelmetOptions } from 'helmet';
import type { PublicConfig } from '@portal/contracts';

/** Origins (other than our own) that configured videos are loaded from. */
function mediaOrigins(config: PublicConfig): string[] {
  const origins = new Set<string>();
  for (const url of [
    config.onboardingVideo.url,
    config.onboardingVideo.captionsUrl,
    config.tutorialVideo.url,
    config.tutorialVideo.captionsUrl,
  ]) {
    if (!url) continue;
    try {
      const parsed = new URL(url);
      if (parsed.protocol === 'https:' || parsed.protocol === 'http:') origins.add(parsed.origin);
    } catch {
      // a relative URL: our own origin
    }
  }
  return [...origins];
}

/**
 * Security headers. The content security policy allows scripts from our own origin only; styles
 * may be inline because the component kit injects them at run time; pictures, media and camera
 * captures may be blob: or data: URLs made in the page.
 */
export function helmetOptions(config: PublicConfig): HelmetOptions {
  const media = mediaOrigins(config);
  return {
    contentSecurityPolicy: {
      useDefaults: false,
      directives: {
        defaultSrc: ["'self'"],
        scriptSrc: ["'self'"],
        styleSrc: ["'self'", "'unsafe-inline'"],
        imgSrc: ["'self'", 'data:', 'blob:'],
        mediaSrc: ["'self'", 'blob:', 'data:', ...media],
        connectSrc: ["'self'"],
        fontSrc: ["'self'", 'data:'],
        objectSrc: ["'none'"],
        baseUri: ["'self'"],
        formAction: ["'self'"],
        frameAncestors: ["'none'"],
        workerSrc: ["'self'", 'blob:'],
        manifestSrc: ["'self'"],
      },
    },
    // Media from another origin (a configured video host) must still load.
    crossOriginEmbedderPolicy: false,
    crossOriginResourcePolicy: { policy: 'same-site' },
    referrerPolicy: { policy: 'strict-origin-when-cross-origin' },
    // The same answer as frame-ancestors 'none', for browsers that only know the older header.
    xFrameOptions: { action: 'deny' },
    // Sent only over HTTPS (below): RFC 6797 forbids it on plain HTTP, where it means nothing.
    hsts: false,
  };
}

/** HSTS, for answers that went out over HTTPS (directly, or through a trusted TLS proxy). */
export const HSTS = 'max-age=15552000';

/**
 * What the page may use: the camera (selfie, photos, video), the microphone (recordings) and
 * the position (an item's location), from our own origin only; nothing else a page could ask for.
 * Only features browsers know are named: an unknown one (e.g. bluetooth, which Chromium does not
 * recognise here) is no protection and makes the browser log an error on every page.
 */
export const PERMISSIONS_POLICY = [
  'camera=(self)',
  'microphone=(self)',
  'geolocation=(self)',
  'fullscreen=(self)',
  'accelerometer=()',
  'gyroscope=()',
  'magnetometer=()',
  'payment=()',
  'usb=()',
  'serial=()',
  'hid=()',
  'midi=()',
  'display-capture=()',
  'browsing-topics=()',
].join(', ');

/**
 * The security headers as helmet sets them on a response (over HTTPS with HSTS). It is run once
 * per protocol, by securityHeaderPairs: the headers never change, and every answer takes them from
 * the response policy (response-policy.ts). @fastify/helmet built a new helmet middleware, parsing
 * the whole policy again, on every request: about a third of the gateway's CPU time per proxied
 * request (bench/gateway/README.md).
 */
function securityHeaders(config: PublicConfig): onRequestHookHandler {
  const apply = helmet(helmetOptions(config));
  return function securityHeadersHook(request, reply, done) {
    reply.raw.setHeader('permissions-policy', PERMISSIONS_POLICY);
    // request.protocol honours X-Forwarded-Proto only when TRUST_PROXY is on.
    if (request.protocol === 'https') reply.raw.setHeader('strict-transport-security', HSTS);
    apply(request.raw, reply.raw, (error) => done(error as Error | undefined));
  };
}

const UNSAFE_METHODS = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);

/**
 * Refuses state-changing requests that a browser marks as coming from another site. The session
 * cookie is SameSite=Lax already; this is the second lock on the door.
 */
export function isCrossSiteWrite(method: string, headers: Record<string, string | string[] | undefined>, host: string): boolean {
  if (!UNSAFE_METHODS.has(method)) return false;
  if (headers['sec-fetch-site'] === 'cross-site') return true;
  const origin = headers.origin;
  if (typeof origin !== 'string' || origin === 'null') return typeof origin === 'string';
  try {
    return new URL(origin).host !== host;
  } catch {
    return true;
  }
}

/**
 * The headers `securityHeaders` sets on an answer over plain HTTP or over HTTPS, as [name, value]
 * pairs in the order it sets them, found by running that very hook once against a response that
 * records them. Every answer carries these (the response policy writes them), so every path sends
 * the same headers by construction (tests/integration/security-headers.test.ts and
 * gateway-cache-fast-path.test.ts compare them on the wire too).
 */
export function securityHeaderPairs(config: PublicConfig, https: boolean): [string, string][] {
  const set = new Map<string, [string, string]>();
  const raw = {
    setHeader(name: string, value: string | number | readonly string[]) {
      set.set(name.toLowerCase(), [name, Array.isArray(value) ? value.join(', ') : String(value)]);
      return raw;
    },
    removeHeader(name: string) {
      set.delete(name.toLowerCase());
    },
    getHeader(name: string) {
      return set.get(name.toLowerCase())?.[1];
    },
  };
  let finished = false;
  const hook = securityHeaders(config) as unknown as (request: unknown, reply: unknown, done: (error?: Error) => void) => void;
  hook({ protocol: https ? 'https' : 'http', raw: { headers: {}, method: 'GET', url: '/' } }, { raw }, (error) => {
    if (error) throw error;
    finished = true;
  });
  // helmet's middleware runs synchronously; anything else would be a change to look at.
  if (!finished) throw new Error('the security headers hook did not finish synchronously');
  return [...set.values()];
}
