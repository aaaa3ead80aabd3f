import { randomBytes } from 'node:crypto';
import { get } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { IDENTITY_HEADER, IdentityTokens } from '@portal/platform';
import { waitFor } from '@portal/platform/testing';
import { ApiClient } from '../support/api-client.js';
import { adminClient, newParticipant } from '../support/accounts.js';
import type { EvidenceItem } from '../support/evidence.js';
import { freePort } from '../support/free-port.js';
import { startTestPortal, type TestPortal } from '../support/portal.js';

// The gateway keeps public API answers (the archive) in memory. What reaches the evidence and
// identity services is read from their own Prometheus metrics, on their own loopback ports.
// The cache keeps answers 30 s here (the archive's own max-age), so a change that shows at once
// cannot be explained by an entry running out.

const INTERNAL_SECRET = randomBytes(32).toString('base64url');
let portal: TestPortal;
let evidenceUrl: string;
let identityUrl: string;

/** How many GETs of this route (template) with this status a service has answered. */
async function answered(serviceUrl: string, route: string, status = 200): Promise<number> {
  const text = await (await fetch(`${serviceUrl}/metrics`)).text();
  let count = 0;
  for (const line of text.split('\n')) {
    if (!line.startsWith('portal_http_request_duration_seconds_count{')) continue;
    if (line.includes('method="GET"') && line.includes(`route="${route}"`) && line.includes(`status="${status}"`))
      count += Number(line.split(' ').pop());
  }
  return count;
}

/** A GET, and the count of the service's answers for the route once it has recorded this one (if it reached it). */
async function settledCount(serviceUrl: string, route: string, atLeast: number, status = 200): Promise<number> {
  return waitFor(
    async () => {
      const count = await answered(serviceUrl, route, status);
      return count >= atLeast ? count : 0;
    },
    { what: `${route} answered ${atLeast} times` },
  );
}

const titles = (answer: { data: EvidenceItem[] }) => answer.data.map((item) => item.title);

beforeAll(async () => {
  const [evidencePort, identityPort] = [await freePort(), await freePort()];
  portal = await startTestPortal({
    INTERNAL_SECRET,
    EVIDENCE_PORT: String(evidencePort),
    IDENTITY_PORT: String(identityPort),
    PUBLIC_CACHE_TTL_MS: '30000',
    MEDIA_WORKER_ENABLED: 'false',
  });
  evidenceUrl = `http://127.0.0.1:${evidencePort}`;
  identityUrl = `http://127.0.0.1:${identityPort}`;
});

afterAll(async () => {
  await portal?.dispose();
});

describe('the gateway cache of public answers', () => {
  it('answers a second identical archive GET from memory, for a visitor and a signed-in participant alike, with the same headers, an Age and the security headers', async () => {
    const owner = await newParticipant(portal.url);
    const { client: admin } = await adminClient(portal.url);
    const note = await owner.client.post('/api/evidence', { title: 'Cached sighting', notes: 'by the library' });
    expect((await admin.put(`/api/evidence/clearance/${note.data.id}`)).data.is_public).toBe(true);

    const visitor = new ApiClient(portal.url);
    const before = await answered(evidenceUrl, '/api/evidence/public');
    const first = await visitor.get('/api/evidence/public?limit=7');
    expect(first.status).toBe(200);
    expect(titles(first)).toContain('Cached sighting');
    const afterFirst = await settledCount(evidenceUrl, '/api/evidence/public', before + 1);
    expect(afterFirst).toBe(before + 1);

    const second = await visitor.get('/api/evidence/public?limit=7');
    const third = await owner.client.get('/api/evidence/public?limit=7');
    const head = await fetch(`${portal.url}/api/evidence/public?limit=7`, { method: 'HEAD' });
    expect(await answered(evidenceUrl, '/api/evidence/public')).toBe(afterFirst);

    for (const cached of [second, third]) {
      expect(cached.status).toBe(200);
      expect(cached.text).toBe(first.text);
      expect(cached.headers.get('age')).toMatch(/^\d+$/);
      const own = new Set(['age', 'date', 'x-request-id']);
      const names = (headers: Headers) => [...headers.keys()].filter((name) => !own.has(name)).sort();
      expect(names(cached.headers)).toEqual(names(first.headers));
      for (const name of names(first.headers)) expect(cached.headers.get(name), name).toBe(first.headers.get(name));
      expect(cached.headers.get('x-request-id')).not.toBe(first.headers.get('x-request-id'));
    }
    expect(first.headers.get('age')).toBeNull();
    expect(second.headers.get('cache-control')).toBe('public, max-age=30');
    expect(second.headers.get('x-content-type-options')).toBe('nosniff');
    expect(second.headers.get('content-security-policy')).toBeTruthy();
    expect(head.status).toBe(200);
    expect(head.headers.get('content-length')).toBe(String(Buffer.byteLength(first.text)));
    expect(await head.text()).toBe('');

    // A conditional request with the kept ETag is answered 304 from memory too: the service sees
    // nothing (gateway-cache-fast-path.test.ts compares it with the service's own 304). (node:http,
    // because fetch adds Cache-Control: no-cache to a request with If-None-Match.)
    const conditional = await new Promise<number>((resolve, reject) => {
      get(`${portal.url}/api/evidence/public?limit=7`, { headers: { 'if-none-match': first.headers.get('etag')! } }, (response) => {
        response.resume();
        resolve(response.statusCode!);
      }).on('error', reject);
    });
    expect(conditional).toBe(304);
    expect(await answered(evidenceUrl, '/api/evidence/public', 304)).toBe(0);
    expect(await answered(evidenceUrl, '/api/evidence/public')).toBe(afterFirst);
  });

  it('asks the evidence service once for many simultaneous identical requests', async () => {
    const before = await answered(evidenceUrl, '/api/evidence/public');
    const visitors = Array.from({ length: 12 }, () => new ApiClient(portal.url));
    const answers = await Promise.all(visitors.map((visitor) => visitor.get('/api/evidence/public?limit=11')));
    expect(answers.map((answer) => answer.status)).toEqual(answers.map(() => 200));
    expect(new Set(answers.map((answer) => answer.text)).size).toBe(1);
    expect(await settledCount(evidenceUrl, '/api/evidence/public', before + 1)).toBe(before + 1);
  });

  it('shows an item made public or private by an administrator, and one deleted by its owner, in the very next archive GET', async () => {
    const owner = await newParticipant(portal.url);
    const { client: admin } = await adminClient(portal.url);
    const visitor = new ApiClient(portal.url);
    const note = await owner.client.post('/api/evidence', { title: 'Comes and goes', notes: '' });
    const page = '/api/evidence/public?limit=50';

    await visitor.get(page);
    expect(titles(await visitor.get(page))).not.toContain('Comes and goes');
    await admin.put(`/api/evidence/clearance/${note.data.id}`);
    expect(titles(await visitor.get(page))).toContain('Comes and goes');
    expect(titles(await visitor.get(page))).toContain('Comes and goes');

    await admin.put(`/api/evidence/clearance/${note.data.id}`);
    expect(titles(await visitor.get(page))).not.toContain('Comes and goes');

    await admin.put(`/api/evidence/clearance/${note.data.id}`);
    expect(titles(await visitor.get(page))).toContain('Comes and goes');
    expect(titles(await visitor.get(page))).toContain('Comes and goes');
    expect((await owner.client.delete(`/api/evidence/delete/${note.data.id}`)).status).toBe(200);
    expect(titles(await visitor.get(page))).not.toContain('Comes and goes');
    expect((await visitor.get(`/api/evidence/item/${note.data.id}`)).status).toBe(404);
  });

  it('shows a renamed participant in the very next archive GET once the evidence service has the new name', async () => {
    const owner = await newParticipant(portal.url);
    const { client: admin } = await adminClient(portal.url);
    const visitor = new ApiClient(portal.url);
    const note = await owner.client.post('/api/evidence', { title: 'Renamed author', notes: '' });
    await admin.put(`/api/evidence/clearance/${note.data.id}`);
    const page = '/api/evidence/public?limit=40';
    const authorOf = async () => (await visitor.get(page)).data.find((item: EvidenceItem) => item.id === note.data.id)?.username;
    expect(await authorOf()).toBe(owner.user.username);
    expect(await authorOf()).toBe(owner.user.username);

    const renamed = `${owner.user.username}_x`.slice(0, 30);
    const update = await admin.put(`/api/user/admin/${owner.user.id}`, {
      username: renamed,
      email: owner.user.email,
      phone_number: '5551234567',
      full_name: 'Renamed Informant',
    });
    expect(update.status, update.text).toBe(200);
    // Evidence learns the new name from identity's event; its owner's own list (never cached)
    // shows when it has.
    await waitFor(async () => (await owner.client.get('/api/evidence')).data.some((item: EvidenceItem) => item.username === renamed), {
      what: 'the evidence service has the new name',
    });
    expect(await authorOf()).toBe(renamed);
  });

  it('shows an owner’s edit, a bulk visibility change and a removed account in the archive GETs that follow, where answers from memory would otherwise stay', async () => {
    const owner = await newParticipant(portal.url);
    const { client: admin } = await adminClient(portal.url);
    const visitor = new ApiClient(portal.url);
    const page = '/api/evidence/public?limit=60';
    const note = await owner.client.post('/api/evidence', { title: 'Before the edit', notes: '' });
    const other = await owner.client.post('/api/evidence', { title: 'Shown in bulk', notes: '' });
    await admin.put(`/api/evidence/clearance/${note.data.id}`);
    await visitor.get(page);
    expect(titles(await visitor.get(page))).toContain('Before the edit');

    const edited = await owner.client.put(`/api/evidence/update/${note.data.id}`, { title: 'After the edit', notes: 'changed' });
    expect(edited.status, edited.text).toBe(200);
    const afterEdit = titles(await visitor.get(page));
    expect(afterEdit).not.toContain('Before the edit');
    expect(titles(await visitor.get(page))).toEqual(afterEdit);

    expect(titles(await visitor.get(page))).not.toContain('Shown in bulk');
    expect((await admin.put('/api/evidence/visibility', { ids: [other.data.id], is_public: true })).status).toBe(200);
    expect(titles(await visitor.get(page))).toContain('Shown in bulk');
    expect(titles(await visitor.get(page))).toContain('Shown in bulk');

    // The account's evidence leaves the archive when the evidence service has heard of the
    // removal; no answer kept from before stays meanwhile.
    expect((await admin.delete(`/api/user/${owner.user.id}`)).status).toBe(200);
    await waitFor(async () => !titles(await visitor.get(page)).includes('Shown in bulk'), {
      timeoutMs: 10_000,
      what: 'the removed account’s evidence to leave the archive',
    });
    expect(titles(await visitor.get(page))).not.toContain('Shown in bulk');
    expect(titles(await visitor.get(page))).not.toContain('Shown in bulk');
  });

  it('is emptied by evidence events: a change made past this gateway shows without waiting for the entry to run out', async () => {
    const owner = await newParticipant(portal.url);
    const { user: adminUser } = await adminClient(portal.url);
    const visitor = new ApiClient(portal.url);
    const note = await owner.client.post('/api/evidence', { title: 'Changed elsewhere', notes: '' });
    const page = '/api/evidence/public?limit=45';
    await visitor.get(page);
    expect(titles(await visitor.get(page))).not.toContain('Changed elsewhere');

    // Another gateway instance would send this; here it goes to the evidence service directly,
    // with the identity header a gateway signs.
    const token = await new IdentityTokens(INTERNAL_SECRET).signCaller({
      userId: adminUser.id,
      role: 2,
      username: 'overseer',
      sessionId: 'direct',
    });
    const toggled = await fetch(`${evidenceUrl}/api/evidence/clearance/${note.data.id}`, {
      method: 'PUT',
      headers: { [IDENTITY_HEADER]: token },
    });
    expect(toggled.status).toBe(200);
    await waitFor(async () => titles(await visitor.get(page)).includes('Changed elsewhere'), {
      timeoutMs: 10_000,
      what: 'the archive shows the item',
    });
  });

  it('never keeps private answers, and never shows one caller what another may see', async () => {
    const owner = await newParticipant(portal.url);
    const { client: admin } = await adminClient(portal.url);
    const visitor = new ApiClient(portal.url);
    const secret = await owner.client.post('/api/evidence', { title: 'Only mine', notes: 'private notes' });

    const routes: [string, string, ApiClient, string][] = [
      [evidenceUrl, '/api/evidence', owner.client, '/api/evidence?limit=9'],
      [evidenceUrl, '/api/evidence/admin', admin, '/api/evidence/admin?limit=9'],
      [evidenceUrl, '/api/evidence/item/:id', owner.client, `/api/evidence/item/${secret.data.id}`],
      [identityUrl, '/api/user', owner.client, '/api/user'],
    ];
    for (const [service, route, client, path] of routes) {
      const before = await answered(service, route);
      expect((await client.get(path)).status).toBe(200);
      expect((await client.get(path)).status).toBe(200);
      expect(await settledCount(service, route, before + 2), path).toBe(before + 2);
    }

    expect((await owner.client.get('/api/evidence?limit=9')).text).toContain('Only mine');
    expect((await visitor.get('/api/evidence?limit=9')).status).toBe(401);
    expect((await visitor.get(`/api/evidence/item/${secret.data.id}`)).status).toBe(404);
    expect((await visitor.get('/api/user')).status).toBe(401);
    expect((await visitor.get('/api/evidence/admin?limit=9')).status).toBe(401);
    expect((await owner.client.get('/api/evidence/admin?limit=9')).status).toBe(403);
    const other = await newParticipant(portal.url);
    expect((await other.client.get('/api/user')).data.username).toBe(other.user.username);
    expect((await other.client.get('/api/evidence?limit=9')).text).not.toContain('Only mine');
    expect(JSON.stringify((await visitor.get('/api/evidence/public?limit=50')).data)).not.toContain('Only mine');
  });
});
