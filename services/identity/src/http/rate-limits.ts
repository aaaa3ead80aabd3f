import { createHash } from 'node:crypto';
import type { Request, RequestHandler, Response } from 'express';
import { rateLimit, ipKeyGenerator, type Options, type RateLimitInfo } from 'express-rate-limit';
import { RedisStore, type RedisReply } from 'rate-limit-redis';
import type { Redis } from 'ioredis';
import type { z } from 'zod';
import { MESSAGES } from '@portal/contracts';
import { HttpError, parseInput } from '@portal/platform';

export interface AuthRateLimits {
  login: RequestHandler[];
  check: RequestHandler[];
  checkEmail: RequestHandler[];
  register: RequestHandler[];
  /** Wrong current passwords given to change the e-mail address, per account. */
  currentPassword: RequestHandler[];
  sendCode: RequestHandler[];
  checkCode: RequestHandler[];
  /** New confirmation links: per account, per address they go to, per client address. */
  resendLink: RequestHandler[];
  /** Drops the per-account counters of a deleted account (they hold its username and address). */
  forgetAccount(account: { id: string; username: string; email: string }): Promise<void>;
}

export interface AuthRateLimitSettings {
  enabled: boolean;
  /** Registrations per minute from one client address (0 = no limit). */
  registerPerMinute: number;
  /** Shared counters (Redis) when there is more than one replica. */
  store?: ((name: string) => Options['store']) | undefined;
  /** How long a login waits per failure past the slow-down threshold (tests shorten it). */
  loginDelayStepMs?: number;
  /**
   * The id of the account a login names (by username or by e-mail address), or null: the
   * per-account login counters count an account once, whichever of its names is guessed at.
   */
  accountOfLogin?: ((login: string) => Promise<string | null>) | undefined;
}

const MINUTE = 60_000;
/** Failed logins on one account, from every address together, before each attempt is slowed down. */
export const LOGIN_SLOWDOWN_AFTER = 20;
/** The longest a login on a much-guessed account is made to wait. */
export const LOGIN_MAX_DELAY_MS = 10_000;

/**
 * Replaces the body by what `schema` reads from it, or answers 400. The per-account limiters that
 * follow key on the parsed body, and the route reads the same parsed body: the account that is
 * counted is always the account that is acted on (a legacy array body cannot name one address to
 * the limiter and another to the route).
 */
export function parsedBody(schema: z.ZodType): RequestHandler {
  return (req, _res, next) => {
    try {
      req.body = parseInput(schema, req.body);
      next();
    } catch (error) {
      next(error);
    }
  };
}

/** The key of a reset-flow request's account: the address its parsed body names. */
export const resetAccountKey = (req: Request): string => String((req.body as { email?: unknown } | undefined)?.email ?? '');
/** The login (username or address) a request names, in lower case. */
const loginName = (req: Request): string =>
  String((req.body as { username?: unknown } | undefined)?.username ?? '')
    .trim()
    .toLowerCase();
/**
 * The key of a login's account: the account's id when the login names one (set by the chain's
 * first step, `resolveLoginAccount`), else the name itself, so that unknown names are counted too.
 */
export const loginAccountKey = (req: Request, res: Response): string => {
  const account = (res.locals as { loginAccount?: string }).loginAccount;
  return account ?? `name:${loginName(req)}`;
};
const addressKey = (req: Request): string => ipKeyGenerator(req.ip ?? '');
/**
 * The mailbox a new confirmation link would go to: the signed-in account's address, set by the
 * route's first step (`res.locals.accountEmail`) before the limiters run.
 */
export const resendMailboxKey = (res: Response): string =>
  String((res.locals as { accountEmail?: string }).accountEmail ?? '').toLowerCase();
const hashed = (value: string): string => createHash('sha256').update(value).digest('base64url').slice(0, 22);

/** Counters in Redis, so that every identity replica counts the same requests. */
export function redisRateLimitStore(redis: Redis, namespace: string): (name: string) => Options['store'] {
  return (name) =>
    new RedisStore({
      prefix: `${namespace}:rate-limit:${name}:`,
      sendCommand: (command: string, ...args: string[]) => redis.call(command, ...args) as Promise<RedisReply>,
    });
}

/**
 * The abuse limits of the sign-in, registration and reset routes (numbers in docs/decisions/0023-abuse-limits.md
 * and docs/SECURITY.md). Per-address limits are generous because at a festival many phones share
 * one venue Wi-Fi or mobile carrier address. Password guessing is stopped per account and address
 * (a stranger's failures lock out the stranger, not the account's owner) and slowed down per
 * account; code guessing is stopped per account.
 */
export function authRateLimits(settings: AuthRateLimitSettings): AuthRateLimits {
  const none: RequestHandler[] = [];
  if (!settings.enabled) {
    return {
      login: none,
      check: none,
      checkEmail: none,
      register: none,
      currentPassword: none,
      sendCode: none,
      checkCode: none,
      resendLink: none,
      forgetAccount: async () => undefined,
    };
  }
  const store = settings.store;
  const limiter = (
    name: string,
    windowMs: number,
    limit: number,
    key: (req: Request, res: Response) => string,
    options: { onlyFailures?: boolean; message?: string } = {},
  ) =>
    rateLimit({
      windowMs,
      limit,
      standardHeaders: 'draft-8',
      legacyHeaders: false,
      skipSuccessfulRequests: options.onlyFailures ?? false,
      keyGenerator: (req, res) => `${name}:${key(req, res)}`,
      ...(store ? { store: store(name) } : {}),
      handler: (_req, _res, next) => next(new HttpError(429, 'rate_limited', options.message ?? MESSAGES.tooManyRequests)),
    });

  // Every failed login on an account, from anywhere, counts here; past LOGIN_SLOWDOWN_AFTER each
  // attempt waits a little longer (never refused: the owner still gets in, just not at once).
  const loginFailures = rateLimit({
    windowMs: 15 * MINUTE,
    limit: Number.MAX_SAFE_INTEGER,
    standardHeaders: false,
    legacyHeaders: false,
    skipSuccessfulRequests: true,
    requestPropertyName: 'loginFailures',
    keyGenerator: (req, res) => `login-account:${loginAccountKey(req, res)}`,
    ...(store ? { store: store('login-account') } : {}),
  });
  const accountOfLogin = settings.accountOfLogin;
  // Which account the login names: a username and an address of one account count as one.
  const resolveLoginAccount: RequestHandler = (req, res, next) => {
    const name = loginName(req);
    if (!accountOfLogin || !name) return next();
    accountOfLogin(name).then((id) => {
      if (id) (res.locals as { loginAccount?: string }).loginAccount = `user:${id}`;
      next();
    }, next);
  };
  const step = settings.loginDelayStepMs ?? 500;
  const slowDown: RequestHandler = (req, _res, next) => {
    const used = (req as Request & { loginFailures?: RateLimitInfo }).loginFailures?.used ?? 0;
    const delay = Math.min(LOGIN_MAX_DELAY_MS, Math.max(0, used - LOGIN_SLOWDOWN_AFTER) * step);
    if (delay === 0) return next();
    setTimeout(next, delay);
  };

  const perAccount = {
    send: limiter('send-account', 60 * MINUTE, 5, resetAccountKey),
    checkCode: limiter('check-code-account', 15 * MINUTE, 20, resetAccountKey),
    // A new confirmation link: five an hour per account, and five an hour to one address (an
    // account's address can be changed, so a mailbox is not flooded by turns of several accounts).
    resend: limiter('resend-link-account', 60 * MINUTE, 5, (req) => req.caller?.userId ?? addressKey(req), {
      message: MESSAGES.tooManyLinks,
    }),
    resendMailbox: limiter('resend-link-mailbox', 60 * MINUTE, 5, (_req, res) => resendMailboxKey(res), { message: MESSAGES.tooManyLinks }),
  };
  const register: RequestHandler[] =
    settings.registerPerMinute > 0
      ? [limiter('register-address', MINUTE, settings.registerPerMinute, addressKey, { message: MESSAGES.tooManyRegistrations })]
      : none;
  // A session alone must not become a way to guess the password: ten wrong ones per account in 15 minutes.
  const currentPassword = rateLimit({
    windowMs: 15 * MINUTE,
    limit: 10,
    standardHeaders: 'draft-8',
    legacyHeaders: false,
    skipSuccessfulRequests: true,
    requestWasSuccessful: (_req, res) => res.locals.currentPasswordRefused !== true,
    keyGenerator: (req) => `current-password:${req.caller?.userId ?? addressKey(req)}`,
    ...(store ? { store: store('current-password') } : {}),
    handler: (_req, _res, next) => next(new HttpError(429, 'rate_limited', MESSAGES.tooManyRequests)),
  });
  return {
    currentPassword: [currentPassword],
    // Ten failed logins per account from one address in 15 minutes; 300 attempts per address.
    login: [
      limiter('login-address', 15 * MINUTE, 300, addressKey),
      resolveLoginAccount,
      // Keyed by a hash of the login: a deleted account's counters here cannot be listed to be
      // dropped, so they name no one, and expire within 15 minutes.
      limiter('login-account-address', 15 * MINUTE, 10, (req, res) => `${hashed(loginAccountKey(req, res))}:${addressKey(req)}`, {
        onlyFailures: true,
      }),
      loginFailures,
      slowDown,
    ],
    check: [limiter('check-address', 15 * MINUTE, 200, addressKey)],
    checkEmail: [limiter('check-email-address', 15 * MINUTE, 60, addressKey)],
    register,
    // Five codes per account an hour; 50 per address.
    sendCode: [limiter('send-address', 60 * MINUTE, 50, addressKey), perAccount.send],
    checkCode: [limiter('check-code-address', 15 * MINUTE, 100, addressKey), perAccount.checkCode],
    // 50 an hour per client address: a venue's Wi-Fi where everyone asks at once (a rotated secret
    // killed every link) gets through; one abuser with many accounts on one address is stopped.
    resendLink: [
      limiter('resend-link-address', 60 * MINUTE, 50, addressKey, { message: MESSAGES.tooManyLinks }),
      perAccount.resend,
      perAccount.resendMailbox,
    ],
    async forgetAccount({ id, username, email: address }) {
      // The counters per account and address expire within 15 minutes; these are per account alone.
      const logins = [username, address].map((value) => `name:${value.trim().toLowerCase()}`);
      // express-rate-limit's resetKey answers nothing to wait for (a shared store resets in the background).
      for (const key of [`user:${id}`, ...logins]) loginFailures.resetKey(`login-account:${key}`);
      perAccount.send.resetKey(`send-account:${address.toLowerCase()}`);
      perAccount.checkCode.resetKey(`check-code-account:${address.toLowerCase()}`);
      perAccount.resend.resetKey(`resend-link-account:${id}`);
      perAccount.resendMailbox.resetKey(`resend-link-mailbox:${address.toLowerCase()}`);
    },
  };
}
