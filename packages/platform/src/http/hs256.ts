import { createHmac, timingSafeEqual } from 'node:crypto';

/**
 * Compact JWS tokens signed with HMAC-SHA256 (JWT, alg HS256), with node:crypto's synchronous HMAC:
 * the same tokens jose writes and reads (jose's WebCrypto HMAC is asynchronous, each check a trip
 * through libuv's thread pool). Only what the portal's tokens use: the protected header
 * {"alg":"HS256"}, a JSON object as payload, and the issuer, audience and time checks jose's
 * jwtVerify makes, with an expiry required.
 */

export type JwtPayload = Record<string, unknown> & {
  sub?: string;
  iss?: string;
  aud?: string | string[];
  iat?: number;
  exp?: number;
  nbf?: number;
};

/** The one protected header written, base64url ({"alg":"HS256"}, as jose's SignJWT writes it). */
const HEADER = Buffer.from(JSON.stringify({ alg: 'HS256' })).toString('base64url');
const SEGMENT = /^[A-Za-z0-9_-]+$/;

export class JwtError extends Error {
  override name = 'JwtError';
}

function mac(key: Uint8Array, input: string): Buffer {
  return createHmac('sha256', key).update(input).digest();
}

/** A base64url segment decoded, refused unless it is the one canonical spelling of its bytes. */
function decodeSegment(segment: string, what: string): Buffer {
  if (!SEGMENT.test(segment)) throw new JwtError(`Invalid ${what}`);
  const bytes = Buffer.from(segment, 'base64url');
  if (bytes.toString('base64url') !== segment) throw new JwtError(`Invalid ${what}`);
  return bytes;
}

function parseObject(bytes: Buffer, what: string): Record<string, unknown> {
  let value: unknown;
  try {
    value = JSON.parse(bytes.toString('utf8'));
  } catch {
    throw new JwtError(`Invalid ${what}`);
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) throw new JwtError(`Invalid ${what}`);
  return value as Record<string, unknown>;
}

export function signHs256(payload: JwtPayload, key: Uint8Array): string {
  const input = `${HEADER}.${Buffer.from(JSON.stringify(payload)).toString('base64url')}`;
  return `${input}.${mac(key, input).toString('base64url')}`;
}

export interface Hs256Expectations {
  issuer: string;
  audience: string;
  /** Now, in whole seconds since the epoch (tests may give their own). */
  now?: number;
}

/**
 * The payload of a token that verifies and meets the expectations; a JwtError otherwise. With
 * several keys (a shared secret being rotated), a signature made with any of them verifies.
 */
export function verifyHs256(
  token: string,
  key: Uint8Array | readonly Uint8Array[],
  { issuer, audience, now = Math.floor(Date.now() / 1000) }: Hs256Expectations,
): JwtPayload {
  const parts = token.split('.');
  if (parts.length !== 3) throw new JwtError('Invalid Compact JWS');
  const [encodedHeader, encodedPayload, encodedSignature] = parts as [string, string, string];
  const header = parseObject(decodeSegment(encodedHeader, 'protected header'), 'protected header');
  if (header.alg !== 'HS256') throw new JwtError('"alg" (Algorithm) Header Parameter value not allowed');
  // No extension is understood, so none may be declared critical; b64 (RFC 7797) changes what is signed.
  if ('crit' in header || 'b64' in header) throw new JwtError('Unsupported protected header');
  const signature = decodeSegment(encodedSignature, 'signature');
  const signed = `${encodedHeader}.${encodedPayload}`;
  const matches = (candidate: Uint8Array) => {
    const expected = mac(candidate, signed);
    return signature.length === expected.length && timingSafeEqual(signature, expected);
  };
  if (!(key instanceof Uint8Array ? [key] : key).some(matches)) throw new JwtError('signature verification failed');
  const payload = parseObject(decodeSegment(encodedPayload, 'payload'), 'JWT Claims Set') as JwtPayload;
  if (payload.iss !== issuer) throw new JwtError('unexpected "iss" claim value');
  const audiences = Array.isArray(payload.aud) ? payload.aud : [payload.aud];
  if (!audiences.includes(audience)) throw new JwtError('unexpected "aud" claim value');
  if (payload.iat !== undefined && typeof payload.iat !== 'number') throw new JwtError('"iat" claim must be a number');
  if (payload.nbf !== undefined && (typeof payload.nbf !== 'number' || payload.nbf > now))
    throw new JwtError('"nbf" claim timestamp check failed');
  if (typeof payload.exp !== 'number') throw new JwtError('missing required "exp" claim');
  if (payload.exp <= now) throw new JwtError('"exp" claim timestamp check failed');
  return payload;
}
