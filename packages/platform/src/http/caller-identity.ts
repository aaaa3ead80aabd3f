import { LRUCache } from 'lru-cache';
import { isAdminRole } from '@portal/contracts';
import { checkingSecrets, signingSecret, type SharedSecret } from '../config/internal-secret.js';
import { signHs256, verifyHs256 } from './hs256.js';

/** The header through which the gateway tells a service who is calling. */
export const IDENTITY_HEADER = 'x-portal-identity';
/** The header through which one service authenticates itself to another's internal routes. */
export const SERVICE_TOKEN_HEADER = 'x-portal-service';

export interface CallerIdentity {
  userId: string;
  role: number;
  username: string;
  /** Hash of the session id (never the id itself). */
  sessionId: string;
  /** Whether the user has watched the onboarding video (evidence creation waits for it). */
  videoWatched?: boolean;
}

export function isAdmin(identity: CallerIdentity | undefined): boolean {
  return identity !== undefined && isAdminRole(identity.role);
}

const ISSUER = 'portal-gateway';
const CALLER_AUDIENCE = 'portal-services';
const SERVICE_AUDIENCE = 'portal-internal';

/**
 * Signs and verifies the short-lived tokens that carry a caller's identity from the gateway to
 * the services (HS256 with a secret only the gateway and the services know). A service trusts an
 * identity only when its token verifies, so a header a client forges is worthless, and the
 * gateway removes client-sent copies anyway. Signing and checking are synchronous HMACs
 * (node:crypto, hs256.ts); the methods answer promises as they did when jose did the work.
 */
export class IdentityTokens {
  private readonly key: Uint8Array;
  /** The keys a token may be signed with: the current secret's, and during a rotation the previous one's. */
  private readonly keys: Uint8Array[];
  /**
   * Caller tokens already verified, by their exact text, until they expire. The gateway signs one
   * token per session and reuses it for about 30 s, so a participant's requests (every 5 MiB chunk
   * of an upload, every page) carry the same token: its signature and claims are checked once.
   * A token that verified is valid until its expiry whatever happens meanwhile, so remembering
   * the outcome changes nothing of what is accepted; a different byte is a different key.
   */
  private readonly verified = new LRUCache<string, CallerIdentity>({ max: 10_000 });

  /** Signs with the current secret; checks with it and, during a rotation, with the previous one. */
  constructor(secret: string | SharedSecret) {
    for (const text of checkingSecrets(secret)) {
      if (text.length < 32) throw new Error('INTERNAL_SECRET (and INTERNAL_SECRET_PREVIOUS) must be at least 32 characters long');
    }
    this.key = new TextEncoder().encode(signingSecret(secret));
    this.keys = checkingSecrets(secret).map((text) => new TextEncoder().encode(text));
  }

  /** A token's claims as jose's SignJWT ordered them: the payload, then sub, iss, aud, iat, exp. */
  private sign(claims: Record<string, unknown>, subject: string, audience: string, ttlSeconds: number): string {
    const now = Math.floor(Date.now() / 1000);
    return signHs256({ ...claims, sub: subject, iss: ISSUER, aud: audience, iat: now, exp: now + ttlSeconds }, this.key);
  }

  async signCaller(identity: CallerIdentity, ttlSeconds = 60): Promise<string> {
    return this.sign(
      { role: identity.role, username: identity.username, sid: identity.sessionId, vw: identity.videoWatched === true },
      identity.userId,
      CALLER_AUDIENCE,
      ttlSeconds,
    );
  }

  /**
   * The identity in a caller token that verified before and has not expired since, without a
   * promise; undefined for any other token (verifyCaller decides about those).
   */
  knownCaller(token: string): CallerIdentity | undefined {
    const known = this.verified.get(token);
    return known ? { ...known } : undefined;
  }

  async verifyCaller(token: string): Promise<CallerIdentity> {
    const known = this.verified.get(token);
    if (known) return { ...known };
    const payload = verifyHs256(token, this.keys, { issuer: ISSUER, audience: CALLER_AUDIENCE });
    if (
      typeof payload.sub !== 'string' ||
      typeof payload.role !== 'number' ||
      typeof payload.username !== 'string' ||
      typeof payload.sid !== 'string'
    ) {
      throw new Error('Identity token is missing claims');
    }
    const identity = {
      userId: payload.sub,
      role: payload.role,
      username: payload.username,
      sessionId: payload.sid,
      videoWatched: payload.vw === true,
    };
    // Kept until the token's own expiry (verifyHs256 has just checked that it is in the future).
    const ttl = typeof payload.exp === 'number' ? payload.exp * 1000 - Date.now() : 0;
    if (ttl > 0) this.verified.set(token, identity, { ttl });
    return { ...identity };
  }

  async signService(service: string, ttlSeconds = 300): Promise<string> {
    return this.sign({}, service, SERVICE_AUDIENCE, ttlSeconds);
  }

  async verifyService(token: string): Promise<string> {
    const payload = verifyHs256(token, this.keys, { issuer: ISSUER, audience: SERVICE_AUDIENCE });
    if (typeof payload.sub !== 'string') throw new Error('Service token has no subject');
    return payload.sub;
  }
}

/** Keeps one service token and renews it before it expires. */
export class ServiceTokenSource {
  private token: string | undefined;
  private renewAt = 0;

  constructor(
    private readonly tokens: IdentityTokens,
    private readonly service: string,
    private readonly ttlSeconds = 300,
  ) {}

  async get(): Promise<string> {
    if (!this.token || Date.now() >= this.renewAt) {
      this.token = await this.tokens.signService(this.service, this.ttlSeconds);
      this.renewAt = Date.now() + (this.ttlSeconds * 1000) / 2;
    }
    return this.token;
  }
}
