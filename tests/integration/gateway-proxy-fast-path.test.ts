import { createServer, request, type IncomingHttpHeaders, type Server, type ServerResponse } from 'node:http';
import { connect, type AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildOpenApiDocument } from '@portal/contracts/openapi';
import { IDENTITY_HEADER, IdentityTokens, ServiceMetrics, createLogger } from '@portal/platform';
import { createGateway, gatewaySettingsFromEnv, type Gateway } from '@portal/gateway';
import { ApiClient } from '../support/api-client.js';
import { startTestIdentity, type TestIdentity } from '../support/identity-service.js';

// Signed-in reads are proxied in front of fastify (services/gateway/src/http/proxy-fast-path.ts).
// These tests hold that path to what the full path (fastify's hooks, @fastify/http-proxy) does
// for the same request, by sending it to two gateways over the same services: one as shipped and
// one with GATEWAY_PROXY_FAST_PATH=false. Identity is the real service. In evidence's place is a
// small HTTP server of the test's own, because the tests need answers no real route gives on
// demand (hop-by-hop headers, a chunked body, 204, several Set-Cookie, a body that never ends)
// and must see exactly what the gateway sent on.

const SECRET = 'proxy-fast-path-test-secret-long-enough-123';
const ADMIN = { username: 'fastadmin', email: 'fastadmin@example.org', password: 'fast-admin-pass-1' };
const LIMIT = 40;

/** What the stand-in service received, by path. */
const received = new Map<string, IncomingHttpHeaders>();
/** Paths whose answer the client left before it ended. */
const closedEarly = new Set<string>();
let service: Server;
let serviceUrl: string;
let identity: TestIdentity;
let fast: Gateway;
let full: Gateway;
let fastUrl: string;
let fullUrl: string;
let fastMetrics: ServiceMetrics;
let cookie: string;
let adminId: string;

function answerAsService(path: string, url: string, res: ServerResponse): void {
  switch (path) {
    case '/api/evidence/chunked':
      res.writeHead(200, { 'content-type': 'text/plain' });
      res.write('one,');
      setTimeout(() => res.write('two,'), 20);
      setTimeout(() => res.end('three'), 40);
      return;
    case '/api/evidence/empty':
      res.writeHead(204, { 'x-upstream': 'empty' });
      res.end();
      return;
    case '/api/evidence/cookies':
      res.writeHead(200, [
        ['set-cookie', 'a=1; Path=/'],
        ['set-cookie', 'b=2; Path=/'],
        ['content-type', 'application/json'],
        ['content-length', '2'],
      ]);
      res.end('{}');
      return;
    case '/api/evidence/large': {
      const body = Buffer.alloc(6 * 1024 * 1024, 0x61);
      res.writeHead(200, { 'content-type': 'application/octet-stream', 'content-length': String(body.length) });
      res.end(body);
      return;
    }
    case '/api/evidence/public-page':
      res.writeHead(200, { 'content-type': 'application/json', 'cache-control': 'public, max-age=30', 'content-length': '13' });
      res.end('{"page":true}');
      return;
    case '/api/evidence/endless':
      res.writeHead(200, { 'content-type': 'text/plain' });
      res.write('start');
      res.on('close', () => closedEarly.add(path));
      return;
    default: {
      // The target as it arrived (latin1, as node reads it), to see what the gateway sent on.
      const body = JSON.stringify({ path, url });
      // A connection header naming another header, and keep-alive details: both are the loopback connection's.
      res.writeHead(200, {
        'content-type': 'application/json; charset=utf-8',
        'content-length': String(Buffer.byteLength(body)),
        'cache-control': 'private, no-store',
        etag: '"v1"',
        connection: 'keep-alive, x-hop',
        'x-hop': 'only for the loopback hop',
        'x-upstream': 'yes',
      });
      res.end(body);
    }
  }
}

interface RawAnswer {
  status: number;
  headers: IncomingHttpHeaders;
  rawHeaders: string[];
  body: Buffer;
}

/** One request with exactly these headers (fetch would add its own), from this loopback address. */
function raw(
  base: string,
  path: string,
  headers: Record<string, string> = {},
  options: { method?: string; from?: string } = {},
): Promise<RawAnswer> {
  return new Promise((resolve, reject) => {
    const req = request(
      `${base}${path}`,
      { method: options.method ?? 'GET', headers, ...(options.from ? { localAddress: options.from } : {}) },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (chunk: Buffer) => chunks.push(chunk));
        res.on('end', () =>
          resolve({ status: res.statusCode!, headers: res.headers, rawHeaders: res.rawHeaders, body: Buffer.concat(chunks) }),
        );
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    req.end();
  });
}

/** A GET written byte for byte on a socket (node's client refuses a path that is not plain ASCII): the status line and body. */
function rawGet(base: string, target: Buffer, cookieHeader: string): Promise<{ status: string; body: string }> {
  const { hostname, port } = new URL(base);
  return new Promise((resolve, reject) => {
    const socket = connect(Number(port), hostname, () => {
      socket.write(
        Buffer.concat([
          Buffer.from('GET '),
          target,
          Buffer.from(` HTTP/1.1\r\nHost: ${hostname}:${port}\r\nCookie: ${cookieHeader}\r\nConnection: close\r\n\r\n`),
        ]),
      );
    });
    const chunks: Buffer[] = [];
    socket.on('data', (chunk: Buffer) => chunks.push(chunk));
    socket.on('end', () => {
      const text = Buffer.concat(chunks).toString('latin1');
      resolve({ status: text.slice(0, text.indexOf('\r\n')), body: text.slice(text.indexOf('\r\n\r\n') + 4) });
    });
    socket.on('error', reject);
  });
}

/** Headers each answer has its own of. */
// Each answer's own: its date and request id; and the seconds until the limit's window resets,
// which two requests made one after the other may read on either side of a second (compared
// within a second below).
const OWN = new Set(['date', 'x-request-id', 'x-ratelimit-reset']);
function comparable(headers: IncomingHttpHeaders): Record<string, unknown> {
  return Object.fromEntries(
    Object.entries(headers)
      .filter(([name]) => !OWN.has(name))
      .sort(([a], [b]) => a.localeCompare(b)),
  );
}
const names = (answer: RawAnswer) => answer.rawHeaders.filter((_, i) => i % 2 === 0).map((name) => name.toLowerCase());

/** The same request to both gateways, from the same address (each gateway counts its own limit). */
async function both(path: string, headers: Record<string, string> = {}, options: { method?: string; from?: string } = {}) {
  return { fast: await raw(fastUrl, path, headers, options), full: await raw(fullUrl, path, headers, options) };
}

function expectSameAnswer({ fast: a, full: b }: { fast: RawAnswer; full: RawAnswer }): void {
  expect(a.status).toBe(b.status);
  expect(a.body.equals(b.body)).toBe(true);
  expect(comparable(a.headers)).toEqual(comparable(b.headers));
  expect(a.headers['x-ratelimit-reset'] === undefined).toBe(b.headers['x-ratelimit-reset'] === undefined);
  if (a.headers['x-ratelimit-reset'] !== undefined) {
    expect(Math.abs(Number(a.headers['x-ratelimit-reset']) - Number(b.headers['x-ratelimit-reset']))).toBeLessThanOrEqual(1);
  }
  expect(names(a)).toEqual(names(b));
  expect(a.headers['x-request-id']).toMatch(/^[0-9a-f-]{36}$/);
}

/** How many requests the fast path has answered, or handed back for a reason. */
async function fastPath(outcome: 'answered' | 'over_limit' | 'not_reached'): Promise<number> {
  const metric = await fastMetrics.registry.getSingleMetric('portal_gateway_proxy_fast_path_total')?.get();
  return metric?.values.find((value) => value.labels.outcome === outcome)?.value ?? 0;
}

function gatewayEnv(extra: Record<string, string>) {
  return gatewaySettingsFromEnv({
    HOST: '127.0.0.1',
    PORT: '0',
    INTERNAL_SECRET: SECRET,
    IDENTITY_URL: identity.url,
    EVIDENCE_URL: serviceUrl,
    WEB_DIST: identity.dataDir, // no web app: the API only
    RATE_LIMIT_PER_MINUTE: String(LIMIT),
    PUBLIC_CACHE_TTL_MS: '30000',
    TRUST_PROXY: '1',
    ...extra,
  });
}

beforeAll(async () => {
  service = createServer((req, res) => {
    const path = (req.url ?? '').split('?')[0]!;
    received.set(path, req.headers);
    answerAsService(path, req.url ?? '', res);
  });
  await new Promise<void>((resolve) => service.listen(0, '127.0.0.1', resolve));
  serviceUrl = `http://127.0.0.1:${(service.address() as AddressInfo).port}`;
  identity = await startTestIdentity({
    INTERNAL_SECRET: SECRET,
    ADMIN_USERNAME: ADMIN.username,
    ADMIN_EMAIL: ADMIN.email,
    ADMIN_PASSWORD: ADMIN.password,
  });
  const logger = createLogger({ service: 'gateway', level: 'silent' });
  fastMetrics = new ServiceMetrics('gateway');
  fast = await createGateway(gatewayEnv({}), { logger, openapi: buildOpenApiDocument(), metrics: fastMetrics });
  full = await createGateway(gatewayEnv({ GATEWAY_PROXY_FAST_PATH: 'false' }), {
    logger,
    openapi: buildOpenApiDocument(),
    metrics: new ServiceMetrics('gateway'),
  });
  fastUrl = await fast.start();
  fullUrl = await full.start();
  const api = new ApiClient(fastUrl, { fromAddress: '127.0.0.2' });
  const login = await api.post('/api/user/login', { username: ADMIN.username, password: ADMIN.password });
  expect(login.status).toBe(200);
  adminId = login.data.id;
  cookie = `portal_session=${api.cookies.get('portal_session')}`;
}, 60_000);

afterAll(async () => {
  await fast?.stop();
  await full?.stop();
  await identity?.dispose();
  await new Promise((resolve) => service?.close(resolve));
});

describe('signed-in reads proxied in front of fastify', () => {
  it('answer GET /api/user as the full path does: status, body, every header and their order, the rate-limit count', async () => {
    const from = '127.0.0.3';
    // The session's first request is resolved by asking identity, on the full path of each gateway.
    expectSameAnswer(await both('/api/user', { cookie }, { from }));
    const before = await fastPath('answered');
    for (let i = 0; i < 3; i++) {
      const pair = await both('/api/user', { cookie }, { from });
      expectSameAnswer(pair);
      expect(JSON.parse(pair.fast.body.toString()).username).toBe(ADMIN.username);
      expect(pair.fast.headers['x-ratelimit-remaining']).toBe(String(LIMIT - 2 - i));
      expect(pair.fast.headers['content-security-policy']).toContain("default-src 'self'");
    }
    expect(await fastPath('answered')).toBe(before + 3);

    // HEAD, a query string, and HTTPS said by the trusted proxy in front (HSTS), the same.
    expectSameAnswer(await both('/api/user', { cookie }, { from, method: 'HEAD' }));
    // A URL's first GET is the full path's (the public cache learns that its answer is private).
    for (let i = 0; i < 2; i++) expectSameAnswer(await both('/api/user?fresh=1', { cookie }, { from }));
    for (let i = 0; i < 2; i++) {
      const https = await both('/api/user', { cookie, 'x-forwarded-proto': 'https' }, { from });
      expectSameAnswer(https);
      expect(https.fast.headers['strict-transport-security']).toBeDefined();
    }
    expect(await fastPath('answered')).toBe(before + 6);
  });

  it('answer a visitor, and a session cookie nobody has, as the full path does', async () => {
    const from = '127.0.0.4';
    const visitor = await both('/api/user', {}, { from });
    expect(visitor.fast.status).toBe(401);
    expectSameAnswer(visitor);
    expectSameAnswer(await both('/api/session', {}, { from }));
    // A cookie the session cache does not know is resolved on the full path first; then it is known (as nobody).
    for (let i = 0; i < 2; i++) {
      const stranger = await both('/api/user', { cookie: 'portal_session=not-a-session-anyone-has' }, { from });
      expect(stranger.fast.status).toBe(401);
      expectSameAnswer(stranger);
    }
  });

  it('send the service what the full path sends: the caller’s token, the forwarded addresses, never the cookie or a forged identity', async () => {
    const forged = {
      cookie,
      [IDENTITY_HEADER]: 'forged-token',
      'x-forwarded-for': '203.0.113.9',
      'x-request-id': 'chosen-by-client',
      'x-custom': 'kept',
    };
    // A URL's first request tells the public cache that its answer is private (the full path's work).
    await raw(fastUrl, '/api/evidence/mine?page=2', { cookie }, { from: '127.0.0.5' });
    const before = await fastPath('answered');
    await raw(fastUrl, '/api/evidence/mine?page=2', forged, { from: '127.0.0.5' });
    const viaFast = received.get('/api/evidence/mine')!;
    expect(await fastPath('answered')).toBe(before + 1);
    await raw(fullUrl, '/api/evidence/mine?page=2', forged, { from: '127.0.0.5' });
    const viaFull = received.get('/api/evidence/mine')!;
    // The Host each gateway was asked by differs (their ports); each passes on its own.
    const own = new Set([IDENTITY_HEADER, 'x-request-id', 'x-forwarded-host']);
    const rest = (headers: IncomingHttpHeaders) =>
      Object.fromEntries(
        Object.entries(headers)
          .filter(([name]) => !own.has(name))
          .sort(([a], [b]) => a.localeCompare(b)),
      );
    expect(rest(viaFast)).toEqual(rest(viaFull));
    expect(viaFast['x-forwarded-host']).toBe(new URL(fastUrl).host);
    expect(viaFast.cookie).toBeUndefined();
    expect(viaFast['x-custom']).toBe('kept');
    // One proxy in front is trusted: the address it saw is the client's.
    expect(viaFast['x-forwarded-for']).toBe('203.0.113.9');
    const tokens = new IdentityTokens(SECRET);
    for (const headers of [viaFast, viaFull]) {
      expect(headers[IDENTITY_HEADER]).not.toBe('forged-token');
      expect((await tokens.verifyCaller(headers[IDENTITY_HEADER] as string)).userId).toBe(adminId);
      // The proxy in front is trusted (TRUST_PROXY=1): its request id is kept, on both paths.
      expect(headers['x-request-id']).toBe('chosen-by-client');
    }
  });

  it('pass on the service’s answer as the full path does: hop-by-hop headers dropped, chunked and large bodies, 204, several Set-Cookie', async () => {
    const from = '127.0.0.6';
    const paths = ['/api/evidence/plain', '/api/evidence/chunked', '/api/evidence/empty', '/api/evidence/cookies', '/api/evidence/large'];
    for (const path of paths) await both(path, { cookie }, { from });
    const before = await fastPath('answered');
    for (const path of paths) {
      const pair = await both(path, { cookie }, { from });
      expectSameAnswer(pair);
    }
    expect(await fastPath('answered')).toBe(before + 5);
    const plain = await raw(fastUrl, '/api/evidence/plain', { cookie }, { from });
    expect(plain.headers['x-hop']).toBeUndefined();
    expect(plain.headers['x-upstream']).toBe('yes');
    expect((await raw(fastUrl, '/api/evidence/chunked', { cookie }, { from })).body.toString()).toBe('one,two,three');
    expect((await raw(fastUrl, '/api/evidence/large', { cookie }, { from })).body.length).toBe(6 * 1024 * 1024);
    expect((await raw(fastUrl, '/api/evidence/cookies', { cookie }, { from })).headers['set-cookie']).toEqual([
      'a=1; Path=/',
      'b=2; Path=/',
    ]);
  });

  it('refuse an address over the limit as the full path does, and count the same requests', async () => {
    const from = '127.0.0.7';
    for (let i = 0; i < LIMIT; i++) {
      const pair = await both('/api/user', { cookie }, { from });
      expect(pair.fast.status).toBe(200);
      expect(pair.fast.headers['x-ratelimit-remaining']).toBe(pair.full.headers['x-ratelimit-remaining']);
    }
    const before = await fastPath('over_limit');
    const refused = await both('/api/user', { cookie }, { from });
    expect(refused.fast.status).toBe(429);
    expect(refused.fast.headers['retry-after']).toMatch(/^\d+$/);
    expect(JSON.parse(refused.fast.body.toString()).code).toBe('rate_limited');
    expect(comparable(refused.fast.headers)).toEqual(comparable(refused.full.headers));
    expect(refused.fast.body.equals(refused.full.body)).toBe(true);
    expect(await fastPath('over_limit')).toBe(before + 1);
    // Another address is not affected.
    expect((await raw(fastUrl, '/api/user', { cookie }, { from: '127.0.0.8' })).status).toBe(200);
  });

  it('leave to the full path what fastify routes otherwise: a user’s evidence, odd spellings, bodies, conditions, public pages', async () => {
    const from = '127.0.0.9';
    const before = await fastPath('answered');
    // GET /api/user/{id}/evidence is evidence's, not identity's.
    expectSameAnswer(await both(`/api/user/${adminId}/evidence`, { cookie }, { from }));
    expect(received.has(`/api/user/${adminId}/evidence`)).toBe(true);
    for (const path of ['/api/user/..%2Fadmin', '/api//user', '/API/user', '/api/users', '/api/evidence/a.b', '/api/user/logout']) {
      expectSameAnswer(await both(path, { cookie }, { from }));
    }
    expectSameAnswer(await both('/api/evidence/plain', { cookie, 'if-none-match': '"v1"' }, { from }));
    expectSameAnswer(await both('/api/evidence/plain', { cookie, 'content-length': '0' }, { from }));
    expect(await fastPath('answered')).toBe(before);

    // A public answer is kept and then answered from memory; the fast path never takes its key.
    const first = await raw(fastUrl, '/api/evidence/public-page', { cookie }, { from });
    expect(first.headers.age).toBeUndefined();
    const again = await raw(fastUrl, '/api/evidence/public-page', { cookie }, { from });
    expect(again.headers.age).toMatch(/^\d+$/);
    expect(await fastPath('answered')).toBe(before);
    // A private answer's key is known after its first request: from then on the fast path takes it.
    await raw(fastUrl, '/api/evidence/private-once', { cookie }, { from });
    await raw(fastUrl, '/api/evidence/private-once', { cookie }, { from });
    expect(await fastPath('answered')).toBe(before + 1);

    // A query with characters a URL would escape reaches the service as the full path sends it
    // (the second request of each pair is the fast path's).
    const quoted = Buffer.from(`/api/evidence/plain?q="<x>'`);
    for (let i = 0; i < 2; i++) {
      const [viaFast, viaFull] = [await rawGet(fastUrl, quoted, cookie), await rawGet(fullUrl, quoted, cookie)];
      expect(viaFull.status).toBe('HTTP/1.1 200 OK');
      expect(viaFast.status).toBe(viaFull.status);
      expect(viaFast.body).toBe(viaFull.body);
    }
    expect(await fastPath('answered')).toBe(before + 2);
  });

  it('stop asking the service when the client goes away mid-answer, and keep serving', async () => {
    /** Asks for the endless answer and goes away after its first chunk. */
    const leaveEarly = async () => {
      closedEarly.clear();
      await new Promise<void>((resolve, reject) => {
        const req = request(`${fastUrl}/api/evidence/endless`, { headers: { cookie } }, (res) => {
          res.once('data', () => req.destroy());
        });
        req.on('error', () => {});
        req.on('close', () => resolve());
        const timer = setTimeout(() => reject(new Error('no first chunk')), 5000);
        req.on('close', () => clearTimeout(timer));
        req.end();
      });
      await expect.poll(() => closedEarly.has('/api/evidence/endless'), { timeout: 5000 }).toBe(true);
    };
    // The first on the full path (its key is not known yet), the second on the fast path.
    await leaveEarly();
    const before = await fastPath('answered');
    await leaveEarly();
    expect((await raw(fastUrl, '/api/user', { cookie })).status).toBe(200);
    expect(await fastPath('answered')).toBe(before + 1);
  });

  it('hand a request the service does not answer to the full path, which answers it as always', async () => {
    await both('/api/evidence/plain', { cookie }, { from: '127.0.0.10' });
    await new Promise((resolve) => {
      service.close(resolve);
      service.closeAllConnections();
    });
    const before = await fastPath('not_reached');
    const down = await both('/api/evidence/plain', { cookie }, { from: '127.0.0.10' });
    expect(down.fast.status).toBeGreaterThanOrEqual(500);
    expect(down.fast.status).toBe(down.full.status);
    expect(down.fast.body.toString()).toBe(down.full.body.toString());
    // Counted once, as on the full path (the rate-limit headers come first here: the order of headers means nothing).
    expect(comparable(down.fast.headers)).toEqual(comparable(down.full.headers));
    expect(down.fast.headers['x-ratelimit-remaining']).toBe(String(LIMIT - 2));
    expect(await fastPath('not_reached')).toBe(before + 1);
  });
});
