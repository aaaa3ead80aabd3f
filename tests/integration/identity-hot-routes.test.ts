import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import { once } from 'node:events';
import type { AddressInfo } from 'node:net';
import { SignJWT } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { IDENTITY_HEADER, IdentityTokens, type CallerIdentity } from '@portal/platform';
import type { IdentityService } from '@portal/identity';
import { rawRequest } from '../support/raw-http.js';
import { startTestIdentity, type TestIdentity } from '../support/identity-service.js';

// GET /api/user and GET /api/session are answered before identity's express app
// (services/identity/src/http/hot-routes.ts). These tests ask the service as it runs and the same
// express app without that shortcut the same questions, and check that the answers, the request
// log lines and the latency metric are the same, that the shortcut really answered the plain
// cases, and that every refusal (no token, a forged one, an expired one, a deleted user) is the
// express app's own refusal, as before.

const SECRET = 'hot-routes-test-secret-long-enough-1234567890';
const ADMIN = { username: 'hotadmin', email: 'hotadmin@example.org', password: 'hot-admin-pass-1' };

let running: TestIdentity;
let identity: IdentityService;
let hotUrl: string;
let plain: Server;
let plainUrl: string;
let logLines: Record<string, unknown>[];
/** Requests that reached the express app through the service's own server (the shortcut's fallbacks). */
let expressCalls = 0;
let hotPort = 0;
const tokens = new IdentityTokens(SECRET);
let caller: CallerIdentity;
let token: string;

beforeAll(async () => {
  running = await startTestIdentity({
    INTERNAL_SECRET: SECRET,
    ADMIN_USERNAME: ADMIN.username,
    ADMIN_EMAIL: ADMIN.email,
    ADMIN_PASSWORD: ADMIN.password,
  });
  identity = running.service;
  logLines = running.logLines;
  hotUrl = running.url;
  hotPort = Number(new URL(hotUrl).port);
  // Count what reaches express through the service's server (express's app calls app.handle).
  // (app.handle is express's, undeclared in its types.)
  const app = identity.app as unknown as { handle: (req: { socket: { localPort?: number } }, ...rest: unknown[]) => unknown };
  const handle = app.handle.bind(app);
  app.handle = (req, ...rest) => {
    if (req.socket.localPort === hotPort) expressCalls += 1;
    return handle(req, ...rest);
  };
  // The same express app, served the way it was before the shortcut.
  plain = createServer(identity.app).listen(0, '127.0.0.1');
  await once(plain, 'listening');
  plainUrl = `http://127.0.0.1:${(plain.address() as AddressInfo).port}`;

  const { user } = await identity.users.login(ADMIN.username, ADMIN.password);
  caller = { userId: user.id, role: user.role, username: user.username, sessionId: 'hash-of-a-session', videoWatched: false };
  token = await tokens.signCaller(caller);
});

afterAll(async () => {
  plain?.close();
  await running?.dispose();
});

/** What must be equal between the two servers: status, body, and every header but the date. */
function comparable(answer: { status: number; headers: IncomingHttpHeaders; body: string }) {
  const { date: _date, ...headers } = answer.headers;
  return { status: answer.status, headers, body: answer.body };
}

/** The same request to the service (shortcut first) and to the plain express app: answers compared. */
async function both(method: string, path: string, headers: Record<string, string>, expectExpress: boolean, what = '') {
  const before = expressCalls;
  const hot = await rawRequest(`${hotUrl}${path}`, { method, headers });
  const viaExpress = expressCalls - before;
  const reference = await rawRequest(`${plainUrl}${path}`, { method, headers });
  expect(comparable(hot)).toEqual(comparable(reference));
  expect(viaExpress, `${method} ${path} ${what}: ${expectExpress ? 'the express app' : 'the shortcut'} should have answered`).toBe(
    expectExpress ? 1 : 0,
  );
  return hot;
}

/** A caller token with the right secret and claims, whose expiry is already past. */
function expiredToken(): Promise<string> {
  const now = Math.floor(Date.now() / 1000);
  return new SignJWT({ role: caller.role, username: caller.username, sid: caller.sessionId, vw: false })
    .setProtectedHeader({ alg: 'HS256' })
    .setSubject(caller.userId)
    .setIssuer('portal-gateway')
    .setAudience('portal-services')
    .setIssuedAt(now - 120)
    .setExpirationTime(now - 60)
    .sign(new TextEncoder().encode(SECRET));
}

describe('identity answers GET /api/user and GET /api/session before express, with the same answers', () => {
  it('answers the signed-in user and the session probe itself, byte for byte as express does', async () => {
    const user = await both('GET', '/api/user', { [IDENTITY_HEADER]: token, 'x-request-id': 'hot-1' }, false);
    expect(user.status).toBe(200);
    expect(JSON.parse(user.body).username).toBe(ADMIN.username);
    expect(user.headers['cache-control']).toBe('no-store');
    expect(user.headers.etag).toMatch(/^W\/"[0-9a-f]+-[A-Za-z0-9+/]{27}"$/);
    expect(user.headers['x-request-id']).toBe('hot-1');
    const session = await both('GET', '/api/session', { [IDENTITY_HEADER]: token, 'x-request-id': 'hot-2' }, false);
    expect(JSON.parse(session.body).user.id).toBe(caller.userId);
    const visitor = await both('GET', '/api/session', { 'x-request-id': 'hot-3' }, false);
    expect(JSON.parse(visitor.body)).toEqual({ user: null });
  });

  it('makes a request id when the gateway sent none (or an unusable one), as express does', async () => {
    for (const headers of [{}, { 'x-request-id': 'not a valid id!' }] as Record<string, string>[]) {
      const answer = await rawRequest(`${hotUrl}/api/user`, { method: 'GET', headers: { [IDENTITY_HEADER]: token, ...headers } });
      expect(answer.status).toBe(200);
      expect(answer.headers['x-request-id']).toMatch(/^[0-9a-f-]{36}$/);
    }
  });

  it('leaves every refusal to express: no token, a forged one, an expired one, a deleted user', async () => {
    const [header, payload, signature] = token.split('.');
    const flipped = `${signature!.slice(0, 5)}${signature![5] === 'A' ? 'B' : 'A'}${signature!.slice(6)}`;
    const promoted = Buffer.from(
      JSON.stringify({ ...JSON.parse(Buffer.from(payload!, 'base64url').toString()), role: caller.role + 1 }),
    ).toString('base64url');
    const otherSecret = await new IdentityTokens('another-secret-that-is-long-enough-0987654321').signCaller(caller);
    const gone = await tokens.signCaller({ ...caller, userId: '01JNOSUCHUSER00000000000000' });
    const refused: [string, Record<string, string>][] = [
      ['no token', {}],
      ['a changed signature', { [IDENTITY_HEADER]: `${header}.${payload}.${flipped}` }],
      ['changed claims', { [IDENTITY_HEADER]: `${header}.${promoted}.${signature}` }],
      ['another secret', { [IDENTITY_HEADER]: otherSecret }],
      ['an expired token', { [IDENTITY_HEADER]: await expiredToken() }],
      ['an empty header', { [IDENTITY_HEADER]: '' }],
      ['a user who is gone', { [IDENTITY_HEADER]: gone }],
    ];
    for (const [what, headers] of refused) {
      const user = await both('GET', '/api/user', { ...headers, 'x-request-id': 'hot-refused' }, true, what);
      expect(user.status, what).toBe(401);
      expect(JSON.parse(user.body).code, what).toBe('unauthenticated');
    }
    // The session probe: a visitor for a user who is gone or an empty header, a 401 for a bad token.
    for (const [what, headers] of refused.slice(1)) {
      const session = await both('GET', '/api/session', { ...headers, 'x-request-id': 'hot-refused' }, true, what);
      const visitor = what === 'a user who is gone' || what === 'an empty header';
      expect(session.status, what).toBe(visitor ? 200 : 401);
    }
  });

  it('leaves revalidation, HEAD, queries, other spellings of the path and bodies to express', async () => {
    const first = await rawRequest(`${hotUrl}/api/user`, { method: 'GET', headers: { [IDENTITY_HEADER]: token } });
    const etag = String(first.headers.etag);
    const notModified = await both('GET', '/api/user', { [IDENTITY_HEADER]: token, 'if-none-match': etag, 'x-request-id': 'hot-4' }, true);
    expect(notModified.status).toBe(304);
    await both('HEAD', '/api/user', { [IDENTITY_HEADER]: token, 'x-request-id': 'hot-5' }, true);
    await both('GET', '/api/user?x=1', { [IDENTITY_HEADER]: token, 'x-request-id': 'hot-6' }, true);
    await both('GET', '/api/user/', { [IDENTITY_HEADER]: token, 'x-request-id': 'hot-7' }, true);
    await both('GET', '/API/USER', { [IDENTITY_HEADER]: token, 'x-request-id': 'hot-8' }, true);
    // A GET with a body: express reads it (a malformed JSON body is refused there, as before).
    const withBody = async (body: string) => {
      const headers = {
        [IDENTITY_HEADER]: token,
        'x-request-id': 'hot-9',
        'content-type': 'application/json',
        'content-length': String(Buffer.byteLength(body)),
      };
      const before = expressCalls;
      const hot = await rawRequest(`${hotUrl}/api/user`, { method: 'GET', headers, body });
      expect(expressCalls - before).toBe(1);
      const reference = await rawRequest(`${plainUrl}/api/user`, { method: 'GET', headers, body });
      expect(comparable(hot)).toEqual(comparable(reference));
      return hot;
    };
    expect((await withBody('{not json')).status).toBe(400);
    expect((await withBody('{}')).status).toBe(200);
  });

  it('writes the same request log lines and records the same latency metric as express', async () => {
    logLines.length = 0;
    await rawRequest(`${hotUrl}/api/user`, { method: 'GET', headers: { [IDENTITY_HEADER]: token, 'x-request-id': 'log-hot' } });
    await rawRequest(`${plainUrl}/api/user`, { method: 'GET', headers: { [IDENTITY_HEADER]: token, 'x-request-id': 'log-express' } });
    await rawRequest(`${hotUrl}/api/user`, { method: 'GET', headers: { 'x-request-id': 'log-refused' } });
    const lines = logLines.filter((line) => typeof line.req === 'object');
    const shape = (line: Record<string, unknown>) => ({ ...line, time: undefined, responseTime: typeof line.responseTime });
    const hot = lines.find((line) => (line.req as { id: string }).id === 'log-hot');
    const viaExpress = lines.find((line) => (line.req as { id: string }).id === 'log-express');
    expect(hot).toBeDefined();
    expect(shape(hot!)).toEqual(shape({ ...viaExpress!, req: { ...(viaExpress!.req as object), id: 'log-hot' } }));
    expect(hot).toMatchObject({
      level: 20,
      service: 'identity',
      req: { id: 'log-hot', method: 'GET', url: '/api/user' },
      res: { statusCode: 200 },
      msg: 'request completed',
    });
    expect(lines.find((line) => (line.req as { id: string }).id === 'log-refused')).toMatchObject({
      level: 30,
      res: { statusCode: 401 },
      msg: 'request completed',
    });

    const count = async () => {
      const metrics = await rawRequest(`${plainUrl}/metrics`, { method: 'GET' });
      const line = metrics.body
        .split('\n')
        .find(
          (l) =>
            l.startsWith('portal_http_request_duration_seconds_count{') && l.includes('route="/api/user"') && l.includes('status="200"'),
        );
      return Number(line?.split(' ').pop() ?? 0);
    };
    const before = await count();
    await rawRequest(`${hotUrl}/api/user`, { method: 'GET', headers: { [IDENTITY_HEADER]: token } });
    await rawRequest(`${plainUrl}/api/user`, { method: 'GET', headers: { [IDENTITY_HEADER]: token } });
    expect(await count()).toBe(before + 2);
  });
});
