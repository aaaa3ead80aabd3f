import { randomBytes } from 'node:crypto';
import { request, type IncomingHttpHeaders } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { adminClient, newParticipant } from '../support/accounts.js';
import { freePort } from '../support/free-port.js';
import { startTestPortal, type TestPortal } from '../support/portal.js';

// A public page the gateway keeps in memory is answered in front of fastify (the fast path,
// services/gateway/src/http/answer-from-memory.ts). These tests hold it to what the full path
// (fastify's hooks and the public cache's own hook) answers for the same request: the same
// headers, the same rate-limit decision, 304s, HEAD, query strings. A request the fast path
// leaves to the full path is made here by adding `content-length: 0` to a GET (a request with a
// body is always the full path's). What reaches the evidence service is read from its metrics.

const LIMIT = 25;
let portal: TestPortal;
let evidenceUrl: string;
let page: string;

interface RawAnswer {
  status: number;
  headers: IncomingHttpHeaders;
  rawHeaders: string[];
  body: string;
}

/** One request with exactly these headers (fetch would add its own), from this loopback address. */
function raw(path: string, headers: Record<string, string> = {}, options: { method?: string; from?: string } = {}): Promise<RawAnswer> {
  return new Promise((resolve, reject) => {
    const req = request(
      `${portal.url}${path}`,
      { method: options.method ?? 'GET', headers, ...(options.from ? { localAddress: options.from } : {}) },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (chunk: Buffer) => chunks.push(chunk));
        res.on('end', () =>
          resolve({
            status: res.statusCode!,
            headers: res.headers,
            rawHeaders: res.rawHeaders,
            body: Buffer.concat(chunks).toString('utf8'),
          }),
        );
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    req.end();
  });
}

/** The full path: a GET with an empty body is never answered in front of fastify. */
const fullPath = (path: string, headers: Record<string, string> = {}, from?: string) =>
  raw(path, { ...headers, 'content-length': '0' }, from ? { from } : {});

/** How many GETs of the public archive route with this status the evidence service has answered. */
async function evidenceAnswered(status = 200): Promise<number> {
  const text = await (await fetch(`${evidenceUrl}/metrics`)).text();
  let count = 0;
  for (const line of text.split('\n')) {
    if (
      line.startsWith('portal_http_request_duration_seconds_count{') &&
      line.includes('method="GET"') &&
      line.includes('route="/api/evidence/public"') &&
      line.includes(`status="${status}"`)
    ) {
      count += Number(line.split(' ').pop());
    }
  }
  return count;
}

/** Headers each answer has its own of (the date, the connection's, the request id, the Age). */
const OWN = new Set(['date', 'connection', 'keep-alive', 'x-request-id', 'age']);
function comparable(headers: IncomingHttpHeaders): Record<string, unknown> {
  return Object.fromEntries(
    Object.entries(headers)
      .filter(([name]) => !OWN.has(name))
      .sort(([a], [b]) => a.localeCompare(b)),
  );
}

/** A request that went upstream also passed the rate limiter, which adds its own headers. */
function withoutLimiter(headers: IncomingHttpHeaders): Record<string, unknown> {
  return Object.fromEntries(Object.entries(comparable(headers)).filter(([name]) => !name.startsWith('x-ratelimit-')));
}

beforeAll(async () => {
  const evidencePort = await freePort();
  portal = await startTestPortal({
    INTERNAL_SECRET: randomBytes(32).toString('base64url'),
    EVIDENCE_PORT: String(evidencePort),
    PUBLIC_CACHE_TTL_MS: '30000',
    MEDIA_WORKER_ENABLED: 'false',
    RATE_LIMIT_PER_MINUTE: String(LIMIT),
    // X-Forwarded-Proto from the (loopback) proxy in front is believed: HTTPS answers carry HSTS.
    TRUST_PROXY: '1',
  });
  evidenceUrl = `http://127.0.0.1:${evidencePort}`;
  const owner = await newParticipant(portal.url);
  const { client: admin } = await adminClient(portal.url);
  const note = await owner.client.post('/api/evidence', { title: 'Fast sighting', notes: 'by the fountain' });
  expect((await admin.put(`/api/evidence/clearance/${note.data.id}`)).data.is_public).toBe(true);
  page = '/api/evidence/public?limit=5';
}, 60_000);

afterAll(async () => {
  await portal?.dispose();
});

describe('public pages answered from memory in front of fastify', () => {
  it('send the headers of the full path: the security headers, the service headers, a request id of their own and an Age', async () => {
    const before = await evidenceAnswered();
    const miss = await raw(page, {}, { from: '127.0.0.2' });
    expect(miss.status).toBe(200);
    expect(miss.body).toContain('Fast sighting');
    expect(miss.headers.age).toBeUndefined();
    const fast = await raw(page, {}, { from: '127.0.0.2' });
    const full = await fullPath(page, {}, '127.0.0.2');
    expect(await evidenceAnswered()).toBe(before + 1);

    for (const answer of [fast, full]) {
      expect(answer.status).toBe(200);
      expect(answer.body).toBe(miss.body);
      expect(answer.headers.age).toMatch(/^\d+$/);
      expect(answer.headers['x-request-id']).toMatch(/^[0-9a-f-]{36}$/);
    }
    expect(fast.headers['x-request-id']).not.toBe(full.headers['x-request-id']);
    expect(comparable(fast.headers)).toEqual(comparable(full.headers));
    // The miss went past the rate limiter, which adds its own headers; otherwise the same.
    expect(withoutLimiter(miss.headers)).toEqual(comparable(fast.headers));
    expect(fast.headers['content-security-policy']).toContain("default-src 'self'");
    expect(fast.headers['permissions-policy']).toContain('camera=(self)');
    expect(fast.headers['x-frame-options']).toBe('DENY');
    expect(fast.headers['strict-transport-security']).toBeUndefined();
    // Same order of headers as the full path's (names only: values differ for the id and Age).
    const names = (answer: RawAnswer) => answer.rawHeaders.filter((_, i) => i % 2 === 0).map((name) => name.toLowerCase());
    expect(names(fast)).toEqual(names(full));
  });

  it('over HTTPS (a trusted proxy says so) add HSTS, as the full path does, from the same kept answer key', async () => {
    const https = { 'x-forwarded-proto': 'https' };
    await raw(page, https);
    const fast = await raw(page, https);
    const full = await fullPath(page, https);
    expect(fast.headers['strict-transport-security']).toBe('max-age=15552000');
    expect(comparable(fast.headers)).toEqual(comparable(full.headers));
    expect(fast.headers.age).toMatch(/^\d+$/);
  });

  it('answer 304 to If-None-Match with the kept ETag, with the headers of the service’s own 304, and the whole page to a stale one', async () => {
    const first = await raw(page);
    const etag = first.headers.etag!;
    expect(etag).toBeTruthy();
    const before304 = await evidenceAnswered(304);
    const before200 = await evidenceAnswered();

    const fast = await raw(page, { 'if-none-match': etag });
    expect(fast.status).toBe(304);
    expect(fast.body).toBe('');
    expect(fast.headers.age).toMatch(/^\d+$/);
    expect(fast.headers.etag).toBe(etag);
    // Weak comparison, and a list, as the service's own check reads it.
    expect((await raw(page, { 'if-none-match': `"other", W/${etag.replace(/^W\//, '')}` })).status).toBe(304);
    expect((await raw(page, { 'if-none-match': '*' })).status).toBe(304);
    const stale = await raw(page, { 'if-none-match': '"not-this-one"' });
    expect(stale.status).toBe(200);
    expect(stale.body).toBe(first.body);
    expect(await evidenceAnswered(304)).toBe(before304);
    expect(await evidenceAnswered()).toBe(before200);

    // The full path leaves a conditional request to the service, which answers 304 itself.
    const service = await fullPath(page, { 'if-none-match': etag });
    expect(service.status).toBe(304);
    expect(service.headers.age).toBeUndefined();
    expect(service.headers['x-ratelimit-limit']).toBe(String(LIMIT));
    expect(comparable(fast.headers)).toEqual(withoutLimiter(service.headers));
  });

  it('answer HEAD with the GET’s headers and no body; query strings and their spelling are keys of their own', async () => {
    await raw(page);
    const get = await raw(page);
    const head = await raw(page, {}, { method: 'HEAD' });
    expect(head.status).toBe(200);
    expect(head.body).toBe('');
    expect(comparable(head.headers)).toEqual(comparable(get.headers));
    expect(head.headers['content-length']).toBe(String(Buffer.byteLength(get.body)));

    const before = await evidenceAnswered();
    // Another query, the same query spelt otherwise, a trailing parameter: each asks the service once.
    for (const other of ['/api/evidence/public?limit=4', '/api/evidence/public?limit=%35', '/api/evidence/public?limit=5&kind=note']) {
      const first = await raw(other);
      const again = await raw(other);
      expect(first.status, other).toBe(200);
      expect(again.body, other).toBe(first.body);
      expect(again.headers.age, other).toMatch(/^\d+$/);
    }
    expect(await evidenceAnswered()).toBe(before + 3);
  });

  it('make the rate-limit decision the full path makes: an answer from memory is not counted, a page not in memory is', async () => {
    const from = '127.0.0.3';
    const fresh = '/api/evidence/public?limit=3';
    const first = await raw(fresh, {}, { from });
    expect(first.status).toBe(200);
    expect(first.headers['x-ratelimit-remaining']).toBe(String(LIMIT - 1));
    for (let i = 0; i < LIMIT + 5; i++) {
      const fast = await raw(fresh, {}, { from });
      expect(fast.status).toBe(200);
      expect(fast.headers['x-ratelimit-remaining']).toBeUndefined();
    }
    const full = await fullPath(fresh, {}, from);
    expect(full.status).toBe(200);
    expect(full.headers['x-ratelimit-remaining']).toBeUndefined();
    // The answers from memory used none of the address's allowance.
    expect((await raw('/api/config', {}, { from })).headers['x-ratelimit-remaining']).toBe(String(LIMIT - 2));

    // Once over its limit, the address still gets the page in memory on both paths, and a 429 for one that is not.
    for (let i = 0; i < LIMIT; i++) await raw('/api/config', {}, { from });
    expect((await raw('/api/config', {}, { from })).status).toBe(429);
    expect((await raw(fresh, {}, { from })).status).toBe(200);
    expect((await fullPath(fresh, {}, from)).status).toBe(200);
    expect((await raw('/api/evidence/public?limit=2', {}, { from })).status).toBe(429);
  });

  it('leave requests with a range or another condition to the service', async () => {
    await raw(page);
    expect((await raw(page)).headers.age).toMatch(/^\d+$/);
    // Only an answer from memory has an Age.
    const ranged = await raw(page, { range: 'bytes=0-10' });
    expect([200, 206]).toContain(ranged.status);
    expect(ranged.headers.age).toBeUndefined();
    const since = await raw(page, { 'if-modified-since': new Date(Date.now() + 60_000).toUTCString() });
    expect(since.headers.age).toBeUndefined();
  });
});
