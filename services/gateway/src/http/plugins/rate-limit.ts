import type { IncomingMessage } from 'node:http';
import fp from 'fastify-plugin';
import fastifyRateLimit from '@fastify/rate-limit';
import type { Redis } from 'ioredis';
import { MESSAGES } from '@portal/contracts';
import type { LimitDecision } from '../response-policy.js';

/** A check of the general API limit on its own counters, as the proxy fast path asks it. */
export type ApiLimitCheck = (request: { ip: string; url: string; routeOptions: { config: object } }) => Promise<LimitDecision>;

/**
 * The general API limit, shared by the fastify routes and the proxy fast path: one set of
 * counters (in Redis when the gateways share one), and the requests the fast path counted already
 * and handed back (their service was not reached), which the limiter does not count twice.
 */
export class ApiLimiter {
  /** The limiter's own check (@fastify/rate-limit's createRateLimit()), once registered; null when the limit is off. */
  check: ApiLimitCheck | null = null;
  private readonly counted = new WeakSet<IncomingMessage>();

  markCounted(req: IncomingMessage): void {
    this.counted.add(req);
  }

  wasCounted(req: IncomingMessage): boolean {
    return this.counted.has(req);
  }
}

export interface RateLimitOptions {
  /** Requests per minute per client address on /api (0: off). */
  perMinute: number;
  redis?: Redis;
  limiter: ApiLimiter;
}

/** RATE_LIMIT_PER_MINUTE per client address on the API, the 429 in the portal's error shape. */
export const rateLimit = fp<RateLimitOptions>(
  async (api, { perMinute, redis, limiter }) => {
    if (perMinute <= 0) return;
    await api.register(fastifyRateLimit, {
      max: perMinute,
      timeWindow: 60_000,
      ...(redis ? { redis, nameSpace: 'portal:gateway-rate-limit:' } : {}),
      // Pictures and media are cheap and cacheable, and an archive page asks for dozens.
      allowList: (request) => request.url.startsWith('/media/') || limiter.wasCounted(request.raw),
      errorResponseBuilder: () => ({ statusCode: 429, code: 'rate_limited', message: MESSAGES.tooManyRequests }),
    });
    // Without options: the limiter above, its store and its settings (@fastify/rate-limit's createRateLimit).
    limiter.check = (api as unknown as { createRateLimit(): ApiLimitCheck }).createRateLimit();
  },
  { name: 'rate-limit' },
);
