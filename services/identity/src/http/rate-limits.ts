import type { Request, RequestHandler } from 'express';
import { rateLimit, ipKeyGenerator, type Options } from 'express-rate-limit';
import { RedisStore, type RedisReply } from 'rate-limit-redis';
import type { Redis } from 'ioredis';
import { MESSAGES } from '@portal/contracts';
import { HttpError } from '@portal/platform';

export interface AuthRateLimits {
  login: RequestHandler[];
  check: RequestHandler[];
  checkEmail: RequestHandler[];
  sendCode: RequestHandler[];
  checkCode: RequestHandler[];
  /** Drops the per-account counters of a deleted account (they hold its username and address). */
  forgetAccount(account: { username: string; email: string }): Promise<void>;
}

const MINUTE = 60_000;

/**
 * The abuse limits of the sign-in and reset routes (numbers in docs/ARCHITECTURE.md). Per-address
 * limits are generous because at a festival many phones share one mobile carrier address; the
 * per-account limits are what stop password and code guessing.
 */
/** Counters in Redis, so that every identity replica counts the same requests. */
export function redisRateLimitStore(redis: Redis, namespace: string): (name: string) => Options['store'] {
  return (name) =>
    new RedisStore({
      prefix: `${namespace}:rate-limit:${name}:`,
      sendCommand: (command: string, ...args: string[]) => redis.call(command, ...args) as Promise<RedisReply>,
    });
}

export function authRateLimits(enabled: boolean, store?: (name: string) => Options['store']): AuthRateLimits {
  const none: RequestHandler[] = [];
  if (!enabled) return { login: none, check: none, checkEmail: none, sendCode: none, checkCode: none, forgetAccount: async () => undefined };
  const limiter = (name: string, windowMs: number, limit: number, key?: (req: Request) => string, onlyFailures = false) =>
    rateLimit({
      windowMs,
      limit,
      standardHeaders: 'draft-8',
      legacyHeaders: false,
      skipSuccessfulRequests: onlyFailures,
      keyGenerator: key ? (req) => `${name}:${key(req)}` : (req) => `${name}:${ipKeyGenerator(req.ip ?? '')}`,
      ...(store ? { store: store(name) } : {}),
      handler: (_req, _res, next) => next(new HttpError(429, 'rate_limited', MESSAGES.tooManyRequests)),
    });
  const account = (field: string) => (req: Request) => String((req.body as Record<string, unknown> | undefined)?.[field] ?? '').trim().toLowerCase();
  const email = (req: Request) => {
    const body = req.body as unknown;
    const value = Array.isArray(body) ? body.find((item) => typeof item === 'string' && item.includes('@')) : (body as { email?: unknown })?.email;
    return String(value ?? '').trim().toLowerCase();
  };
  const perAccount = {
    login: limiter('login-account', 15 * MINUTE, 10, account('username'), true),
    send: limiter('send-account', 60 * MINUTE, 5, email),
    checkCode: limiter('check-code-account', 15 * MINUTE, 20, email),
  };
  return {
    // Ten failed logins per account in 15 minutes; 300 attempts per address.
    login: [limiter('login-address', 15 * MINUTE, 300), perAccount.login],
    check: [limiter('check-address', 15 * MINUTE, 200)],
    checkEmail: [limiter('check-email-address', 15 * MINUTE, 60)],
    // Five codes per account an hour; 50 per address.
    sendCode: [limiter('send-address', 60 * MINUTE, 50), perAccount.send],
    checkCode: [limiter('check-code-address', 15 * MINUTE, 100), perAccount.checkCode],
    async forgetAccount({ username, email: address }) {
      const logins = [username, address].map((value) => value.trim().toLowerCase());
      await Promise.all([
        ...logins.map((login) => perAccount.login.resetKey(`login-account:${login}`)),
        perAccount.send.resetKey(`send-account:${address.toLowerCase()}`),
        perAccount.checkCode.resetKey(`check-code-account:${address.toLowerCase()}`),
      ]);
    },
  };
}
