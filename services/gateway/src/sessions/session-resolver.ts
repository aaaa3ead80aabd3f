import { createHash } from 'node:crypto';
import { LRUCache } from 'lru-cache';
import { Pool } from 'undici';
import { SERVICE_TOKEN_HEADER, ServiceTokenSource, type CallerIdentity, type IdentityTokens } from '@portal/platform';

export interface ResolvedCaller {
  identity: CallerIdentity;
  /** The signed identity header value for the services. */
  token: string;
}

interface CacheEntry {
  caller: ResolvedCaller | null;
  tokenRenewAt: number;
}

export class IdentityUnavailableError extends Error {
  override name = 'IdentityUnavailableError';
}

const TOKEN_TTL_SECONDS = 60;

/**
 * Turns a session cookie into a caller identity by asking the identity service, and keeps the
 * answer briefly (sessionCacheTtlMs) so that a page of requests costs one question. Revocations
 * (logout, deletion, password change) arrive as events and evict entries at once.
 */
export class SessionResolver {
  private readonly cache: LRUCache<string, CacheEntry>;
  private readonly pool: Pool;
  private readonly serviceToken: ServiceTokenSource;

  constructor(
    identityUrl: string,
    private readonly tokens: IdentityTokens,
    ttlMs: number,
  ) {
    this.cache = new LRUCache({ max: 50_000, ttl: Math.max(ttlMs, 1), ttlAutopurge: false });
    this.pool = new Pool(identityUrl, { connections: 16, keepAliveTimeout: 30_000 });
    this.serviceToken = new ServiceTokenSource(tokens, 'gateway');
  }

  static hash(rawId: string): string {
    return createHash('sha256').update(rawId).digest('base64url');
  }

  /**
   * The caller for a session cookie when the cache answers it as it is (a known session whose
   * token needs no renewal yet, or an id known to be no session: null), without a promise;
   * undefined when resolve() has work to do.
   */
  cached(rawId: string): ResolvedCaller | null | undefined {
    return this.cachedByKey(SessionResolver.hash(rawId));
  }

  /** cached() for a cookie whose hash (SessionResolver.hash) the caller has kept. */
  cachedByKey(key: string): ResolvedCaller | null | undefined {
    const cached = this.cache.get(key);
    if (!cached) return undefined;
    return !cached.caller || Date.now() < cached.tokenRenewAt ? cached.caller : undefined;
  }

  async resolve(rawId: string): Promise<ResolvedCaller | null> {
    const key = SessionResolver.hash(rawId);
    const cached = this.cache.get(key);
    const now = Date.now();
    if (cached) {
      if (!cached.caller || now < cached.tokenRenewAt) return cached.caller;
      const token = await this.tokens.signCaller(cached.caller.identity, TOKEN_TTL_SECONDS);
      cached.caller = { identity: cached.caller.identity, token };
      cached.tokenRenewAt = now + (TOKEN_TTL_SECONDS * 1000) / 2;
      return cached.caller;
    }
    const identity = await this.ask(rawId);
    if (!identity) {
      // Remember unknown ids briefly too, so that a flood of bad cookies does not reach identity.
      this.cache.set(key, { caller: null, tokenRenewAt: 0 }, { ttl: 2000 });
      return null;
    }
    const caller = { identity, token: await this.tokens.signCaller(identity, TOKEN_TTL_SECONDS) };
    this.cache.set(key, { caller, tokenRenewAt: now + (TOKEN_TTL_SECONDS * 1000) / 2 });
    return caller;
  }

  evictSessions(sessionHashes: string[]): void {
    for (const hash of sessionHashes) this.cache.delete(hash);
  }

  evictUser(userId: string): void {
    for (const [key, entry] of this.cache.entries()) {
      if (entry.caller?.identity.userId === userId) this.cache.delete(key);
    }
  }

  async close(): Promise<void> {
    await this.pool.close();
  }

  private async ask(rawId: string): Promise<CallerIdentity | null> {
    let response;
    try {
      response = await this.pool.request({
        method: 'POST',
        path: '/internal/sessions/resolve',
        headers: { 'content-type': 'application/json', [SERVICE_TOKEN_HEADER]: await this.serviceToken.get() },
        body: JSON.stringify({ sessionId: rawId }),
        headersTimeout: 5000,
        bodyTimeout: 5000,
      });
    } catch (error) {
      throw new IdentityUnavailableError(`identity service unreachable: ${(error as Error).message}`);
    }
    const body = (await response.body.json().catch(() => null)) as {
      userId: string;
      role: number;
      username: string;
      sessionId: string;
      videoWatched?: boolean;
    } | null;
    if (response.statusCode === 404 || response.statusCode === 400) return null;
    if (response.statusCode !== 200 || !body) {
      throw new IdentityUnavailableError(`identity service answered ${response.statusCode}`);
    }
    return {
      userId: body.userId,
      role: body.role,
      username: body.username,
      sessionId: body.sessionId,
      videoWatched: body.videoWatched === true,
    };
  }
}
