import type { AddressInfo } from 'node:net';
import express from 'express';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loginRequestSchema } from '@portal/contracts';
import { errorHandler } from '@portal/platform';
import { pino } from 'pino';
import { authRateLimits, LOGIN_SLOWDOWN_AFTER, parsedBody } from '../src/http/rate-limits.js';

const STEP_MS = 500;
let base = '';
let close: () => void = () => undefined;

beforeAll(async () => {
  // The real limiter chain in front of a login that accepts one password.
  // 'admin' and its address name one account, as the user repository would say.
  const ACCOUNTS: Record<string, string> = {
    admin: 'user-1',
    'admin@example.org': 'user-1',
    owner: 'user-2',
    'owner@example.org': 'user-2',
  };
  const limits = authRateLimits({
    enabled: true,
    registerPerMinute: 0,
    loginDelayStepMs: STEP_MS,
    accountOfLogin: async (login) => ACCOUNTS[login.toLowerCase()] ?? null,
  });
  const app = express();
  app.set('trust proxy', true);
  app.use(express.json());
  app.post('/login', parsedBody(loginRequestSchema), ...limits.login, (req, res) => {
    res.status((req.body as { password: string }).password === 'the-right-one' ? 200 : 401).json({});
  });
  app.use(errorHandler(pino({ level: 'silent' })));
  const server = app.listen(0, '127.0.0.1');
  await new Promise((resolve) => server.once('listening', resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  close = () => server.close();
});
afterAll(() => close());

async function login(from: string, password: string, username = 'admin'): Promise<{ status: number; ms: number }> {
  const started = Date.now();
  const response = await fetch(`${base}/login`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-forwarded-for': from },
    body: JSON.stringify({ username, password }),
  });
  return { status: response.status, ms: Date.now() - started };
}

describe('login guessing from many addresses', () => {
  it('is slowed down more and more past the threshold, and the owner still gets in', async () => {
    await login('192.0.2.1', 'warm-up', 'someone-else');
    for (let i = 0; i < LOGIN_SLOWDOWN_AFTER; i++) {
      const attempt = await login(`198.51.100.${i + 1}`, `guess-${i}`);
      expect(attempt.status).toBe(401);
      expect(attempt.ms).toBeLessThan(STEP_MS);
    }
    const first = await login('198.51.100.100', 'guess-x');
    expect(first.status).toBe(401);
    expect(first.ms).toBeGreaterThanOrEqual(STEP_MS - 10);
    const second = await login('198.51.100.101', 'guess-y');
    expect(second.ms).toBeGreaterThanOrEqual(2 * STEP_MS - 10);
    // Not a lockout: the right password from the owner's own address is accepted, after the wait.
    const owner = await login('203.0.113.7', 'the-right-one');
    expect(owner.status).toBe(200);
    expect(owner.ms).toBeGreaterThanOrEqual(3 * STEP_MS - 10);
  });
});

describe('login guessing from one address', () => {
  it('counts an account once, whether it is named by its username or its e-mail address', async () => {
    // Ten wrong passwords for one account from one address, half by each name, then an eleventh.
    for (let i = 0; i < 10; i++) {
      const attempt = await login('192.0.2.50', `guess-${i}`, i % 2 ? 'OWNER@example.org' : 'owner');
      expect(attempt.status, `attempt ${i + 1}`).toBe(401);
    }
    expect((await login('192.0.2.50', 'guess-10', 'owner@example.org')).status).toBe(429);
    expect((await login('192.0.2.50', 'guess-11', 'owner')).status).toBe(429);
    // Another address is not locked out of the account, and unknown names are counted by name.
    expect((await login('192.0.2.51', 'the-right-one', 'owner')).status).toBe(200);
    expect((await login('192.0.2.50', 'guess', 'nobody')).status).toBe(401);
  });
});
