import { request as httpRequest } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildOpenApiDocument } from '@portal/contracts/openapi';
import type { ServedRoute } from '@portal/platform';
import { ROUTE_RULES } from '@portal/gateway';
import { ApiClient } from '../support/api-client.js';
import { adminClient, confirmAddress, newParticipant } from '../support/accounts.js';
import { waitForMedia, type EvidenceItem } from '../support/evidence.js';
import { phoneJpeg, photoBlob } from '../support/media.js';
import { codeIn, waitForMail } from '../support/outbox.js';
import { TEST_ADMIN, startTestPortal, type TestPortal } from '../support/portal.js';
import {
  API_ROUTES,
  CALLERS,
  GATEWAY_FORWARDS,
  GATEWAY_WEB_APP,
  UNDOCUMENTED,
  isInternalRoute,
  profileForm,
  type Account,
  type Answer,
  type Caller,
  type MatrixContext,
  type Status,
} from './authorization-matrix.table.js';

let portal: TestPortal;
let served: { gateway: ServedRoute[]; identity: ServedRoute[]; evidence: ServedRoute[] };
let clients: Record<Caller, ApiClient>;
let accounts: Record<Exclude<Caller, 'visitor'>, Account>;
let ctx: MatrixContext;

const TUS = { 'tus-resumable': '1.0.0' };
const cookieOf = (client: ApiClient) => [...client.cookies].map(([name, value]) => `${name}=${value}`).join('; ');

async function raw(client: ApiClient, method: string, path: string, headers: Record<string, string>, body?: Uint8Array): Promise<Answer> {
  const cookie = cookieOf(client);
  const response = await fetch(new URL(path, portal.url), {
    method,
    headers: { ...headers, ...(cookie ? { cookie } : {}) },
    ...(body ? { body: new Uint8Array(body) } : {}),
  });
  const text = await response.text();
  return { status: response.status, headers: response.headers, text };
}

async function photoItem(client: ApiClient, title: string): Promise<EvidenceItem> {
  const form = new FormData();
  form.append('title', title);
  form.append('file', photoBlob(await phoneJpeg({ width: 320, height: 240 })), 'photo.jpg');
  const created = await client.postForm('/api/evidence', form);
  if (created.status !== 201) throw new Error(`photo upload failed: ${created.status} ${created.text}`);
  return waitForMedia(client, created.data.id);
}

beforeAll(async () => {
  portal = await startTestPortal();
  if (!portal.routes) throw new Error('the authorization matrix needs the all-in-one portal (it reads the route lists)');
  served = portal.routes();
  const [owner, other, admin] = await Promise.all([newParticipant(portal.url), newParticipant(portal.url), adminClient(portal.url)]);
  // Both confirmed their addresses: an appointment under one is that account's (and only then).
  await Promise.all([confirmAddress(portal.dataDir, owner), confirmAddress(portal.dataDir, other)]);
  clients = { visitor: new ApiClient(portal.url), owner: owner.client, other: other.client, admin: admin.client };
  accounts = {
    owner: { ...owner.user, password: owner.password },
    other: { ...other.user, password: other.password },
    admin: { id: admin.user.id, username: TEST_ADMIN.username, email: TEST_ADMIN.email, password: TEST_ADMIN.password },
  };
  // The owner has an avatar, so that its route has something to serve.
  const avatar = profileForm(owner.user.email);
  avatar.append('avatar', photoBlob(await phoneJpeg({ width: 96, height: 96 })), 'me.jpg');
  const withAvatar = await owner.client.putForm('/api/evidence/user', avatar);
  if (withAvatar.status !== 200) throw new Error(`avatar upload failed: ${withAvatar.status} ${withAvatar.text}`);

  const [privatePhoto, publicPhoto] = await Promise.all([
    photoItem(owner.client, 'Matrix private'),
    photoItem(owner.client, 'Matrix public'),
  ]);
  /** The photo as it is now, with the visibility asked for (bulk changes may have flipped it). */
  async function photoWith(item: EvidenceItem, isPublic: boolean): Promise<EvidenceItem> {
    let current = (await owner.client.get(`/api/evidence/item/${item.id}`)).data as EvidenceItem;
    if (current.is_public !== isPublic) current = (await admin.client.put(`/api/evidence/clearance/${item.id}`)).data as EvidenceItem;
    if (current.is_public !== isPublic) throw new Error('could not set the visibility of a matrix photo');
    return current;
  }
  let finished: string | undefined;

  ctx = {
    client: (caller) => clients[caller],
    async freshSession(caller) {
      const client = new ApiClient(portal.url);
      if (caller === 'visitor') return client;
      const login = await client.post('/api/user/login', { username: accounts[caller].username, password: accounts[caller].password });
      if (login.status !== 200) throw new Error(`login of ${caller} failed: ${login.status}`);
      return client;
    },
    account: (caller) => accounts[caller],
    privatePhoto: () => photoWith(privatePhoto, false),
    publicPhoto: () => photoWith(publicPhoto, true),
    async ownerNote() {
      const created = await owner.client.post('/api/evidence', { title: 'Matrix note', notes: 'n' });
      if (created.status !== 201) throw new Error(`note failed: ${created.status}`);
      return created.data as EvidenceItem;
    },
    async ownerUpload() {
      const created = await owner.client.request('POST', '/api/evidence/uploads', {
        headers: { ...TUS, 'upload-length': '10', 'upload-metadata': `title ${Buffer.from('Matrix upload').toString('base64')}` },
      });
      if (created.status !== 201) throw new Error(`upload creation failed: ${created.status} ${created.text}`);
      return created.headers.get('location')!;
    },
    async finishedUpload() {
      if (finished) return finished;
      const bytes = await phoneJpeg({ width: 120, height: 90 });
      const created = await owner.client.request('POST', '/api/evidence/uploads', {
        headers: {
          ...TUS,
          'upload-length': String(bytes.length),
          'upload-metadata': `title ${Buffer.from('Matrix resumable').toString('base64')}`,
        },
      });
      const location = created.headers.get('location')!;
      const last = await raw(
        owner.client,
        'PATCH',
        location,
        { ...TUS, 'upload-offset': '0', 'content-type': 'application/offset+octet-stream' },
        new Uint8Array(bytes),
      );
      if (last.status !== 200) throw new Error(`finishing an upload failed: ${last.status} ${last.text}`);
      finished = location;
      return location;
    },
    async freshParticipant() {
      const { client, user, password } = await newParticipant(portal.url);
      return { client, account: { ...user, password } };
    },
    async resetCode(email) {
      const sent = await clients.visitor.post('/api/email/send', { email });
      if (sent.status !== 200) throw new Error(`sending a code failed: ${sent.status}`);
      return codeIn(await waitForMail(portal.dataDir, email, { subject: /reset code/ }));
    },
    raw,
  };
}, 120_000);
afterAll(async () => {
  await portal?.dispose();
});

const keyOf = (service: string, route: ServedRoute) => `${service} ${route.method} ${route.path}`;
const isApiPath = (path: string) => path === '/api' || path.startsWith('/api/') || path === '/media' || path.startsWith('/media/');

/** The routes of identity and evidence, and the gateway's own, that a table entry must describe. */
function routesNeedingEntries(): string[] {
  const keys = new Set<string>();
  for (const service of ['identity', 'evidence'] as const) {
    for (const route of served[service]) if (!isInternalRoute(route.path)) keys.add(keyOf(service, route));
  }
  for (const route of served.gateway) {
    if (GATEWAY_FORWARDS[route.path] || GATEWAY_WEB_APP.includes(`${route.method} ${route.path}`)) continue;
    // fastify answers HEAD for every GET route; the GET entry covers both.
    if (route.method === 'HEAD' && served.gateway.some((other) => other.method === 'GET' && other.path === route.path)) continue;
    // The catch-all is declared once per method; one entry (ALL) covers it.
    keys.add(route.path === '/api/*' ? 'gateway ALL /api/*' : keyOf('gateway', route));
  }
  return [...keys].sort();
}

/** A route pattern (express or fastify syntax) as a regular expression over concrete paths. */
function patternOf(path: string): RegExp {
  const source = path
    .split(/(:[A-Za-z_]+|\{\*[A-Za-z_]+\}|\*)/)
    .map((part) =>
      part.startsWith(':') ? '[^/]+' : part.startsWith('{*') ? '.+' : part === '*' ? '.*' : part.replace(/[.+?^${}()|[\]\\]/g, '\\$&'),
    )
    .join('');
  return new RegExp(`^${source}$`);
}

describe('the authorization matrix', () => {
  it('has an entry for every route the services and the gateway declare, and no entry for a route that is gone', () => {
    const actual = routesNeedingEntries();
    const table = Object.keys(API_ROUTES).sort();
    expect({
      withoutEntry: actual.filter((key) => !table.includes(key)),
      entryWithoutRoute: table.filter((key) => !actual.includes(key)),
    }).toEqual({
      withoutEntry: [],
      entryWithoutRoute: [],
    });
    for (const [key, probes] of Object.entries(API_ROUTES)) expect(probes.length, key).toBeGreaterThan(0);
  });

  it('forwards exactly the prefixes it means to, and only those', () => {
    const forwards = served.gateway.filter((route) => GATEWAY_FORWARDS[route.path]);
    const declared = new Map<string, Set<string>>();
    for (const route of forwards) declared.set(route.path, (declared.get(route.path) ?? new Set()).add(route.method));
    expect(Object.fromEntries([...declared].map(([path, methods]) => [path, [...methods].sort()]))).toEqual(
      Object.fromEntries(Object.entries(GATEWAY_FORWARDS).map(([path, { methods }]) => [path, [...methods].sort()])),
    );
    // Every gateway route is an API route, a forward, the web app or health: nothing unaccounted.
    const unaccounted = served.gateway.filter(
      (route) =>
        !isApiPath(route.path) &&
        !GATEWAY_WEB_APP.includes(`${route.method} ${route.path}`) &&
        route.path !== '/healthz' &&
        route.path !== '/readyz',
    );
    expect(unaccounted).toEqual([]);
  });

  it("has a served route under every rule of the gateway's route table (body limits, uploads, evictions)", () => {
    // A rule that matches no route the gateway serves would limit or count nothing: a typo, or a
    // route that moved. A prefix rule ('/p/') is tried with a sample path under it.
    const gatewayPaths = served.gateway.map((route) => ({ method: route.method, pattern: patternOf(route.path) }));
    const unmatched = ROUTE_RULES.filter((rule) => {
      const sample = rule.path.endsWith('/') ? `${rule.path}x1` : rule.path;
      return !gatewayPaths.some(
        (route) =>
          (route.method === rule.method || route.method === 'ALL') && route.pattern.test(sample) && !route.pattern.test('/api/x1/x2/x3/x4'),
      );
    });
    expect(unmatched).toEqual([]);
    // What counts as an upload: every body that carries a file, and a tus creation only with its first bytes.
    expect(ROUTE_RULES.filter((rule) => rule.upload !== 'never').map((rule) => `${rule.method} ${rule.path} ${rule.upload}`)).toEqual([
      'POST /api/evidence always',
      'PUT /api/evidence/update/ always',
      'POST /api/evidence/uploads with-body',
      'POST /api/evidence/uploads/ with-body',
      'PATCH /api/evidence/uploads always',
      'PATCH /api/evidence/uploads/ always',
      'PUT /api/evidence/user always',
    ]);
  });

  it('describes every route of the OpenAPI document, and the document every public route', () => {
    const document = buildOpenApiDocument() as unknown as { paths: Record<string, Record<string, unknown>> };
    const specific = [
      ...(['identity', 'evidence'] as const).flatMap((service) =>
        served[service].filter((route) => !isInternalRoute(route.path)).map((route) => ({ service, ...route })),
      ),
      ...served.gateway
        .filter((route) => isApiPath(route.path) && !GATEWAY_FORWARDS[route.path])
        .map((route) => ({ service: 'gateway', ...route })),
    ].filter((route) => route.method !== 'ALL');
    const operations = Object.entries(document.paths).flatMap(([path, item]) =>
      Object.keys(item)
        .filter((method) => ['get', 'put', 'post', 'delete', 'patch', 'head', 'options'].includes(method))
        .map((method) => ({ method: method.toUpperCase(), sample: path.replace(/\{[^}]+\}/g, 'x1') })),
    );
    const matches = (route: { method: string; path: string }, op: { method: string; sample: string }) =>
      route.method === op.method && patternOf(route.path).test(op.sample);
    const documentedButNotServed = operations.filter((op) => !specific.some((route) => matches(route, op)));
    expect(documentedButNotServed).toEqual([]);
    const servedButNotDocumented = [
      ...(['identity', 'evidence'] as const).flatMap((service) =>
        served[service].filter((route) => !isInternalRoute(route.path)).map((route) => keyOf(service, route)),
      ),
      ...routesNeedingEntries().filter((key) => key.startsWith('gateway ') && isApiPath(key.split(' ')[2]!)),
    ]
      .filter((key) => !UNDOCUMENTED[key])
      .filter((key) => {
        const [, method, path] = key.split(' ') as [string, string, string];
        return !operations.some((op) => matches({ method, path }, op));
      });
    expect(servedButNotDocumented).toEqual([]);
  });

  it('gives every caller the answer the table says, on every route', async () => {
    const failures: string[] = [];
    for (const [key, probes] of Object.entries(API_ROUTES)) {
      for (const probe of probes) {
        for (const caller of CALLERS) {
          const expected =
            typeof probe.expect === 'number' || Array.isArray(probe.expect)
              ? probe.expect
              : (probe.expect as Record<Caller, Status>)[caller];
          const allowed: readonly number[] = typeof expected === 'number' ? [expected] : expected;
          let answer: Answer;
          try {
            answer = await probe.run(caller, ctx);
          } catch (error) {
            failures.push(`${key} (${probe.what}) as ${caller}: threw ${(error as Error).message}`);
            continue;
          }
          if (answer.violation) failures.push(`${key} (${probe.what}) as ${caller}: ${answer.violation}`);
          else if (!allowed.includes(answer.status))
            failures.push(`${key} (${probe.what}) as ${caller}: ${answer.status}, expected ${allowed.join(' or ')}`);
        }
      }
    }
    expect(failures).toEqual([]);
  }, 180_000);
});

describe('internal routes', () => {
  /** A request sent as written: no client-side normalisation of dot segments. */
  function rawRequest(method: string, path: string, cookie?: string): Promise<{ status: number; body: string }> {
    const url = new URL(portal.url);
    return new Promise((resolve, reject) => {
      const req = httpRequest(
        {
          host: url.hostname,
          port: url.port,
          method,
          path,
          headers: { 'content-type': 'application/json', ...(cookie ? { cookie } : {}) },
        },
        (res) => {
          const chunks: Buffer[] = [];
          res.on('data', (chunk: Buffer) => chunks.push(chunk));
          res.on('end', () => resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString('utf8') }));
        },
      );
      req.on('error', reject);
      req.end(method === 'GET' || method === 'HEAD' ? undefined : JSON.stringify({ sessionId: 'x' }));
    });
  }

  it('are never reachable through the gateway, by anyone, whatever the path tricks', async () => {
    const internal = (['identity', 'evidence'] as const).flatMap((service) =>
      served[service].filter((route) => route.path.startsWith('/internal/')),
    );
    expect(internal.length).toBeGreaterThan(0);
    const failures: string[] = [];
    for (const route of internal) {
      const path = route.path.replace(/:[A-Za-z_]+/g, '00000000-0000-4000-8000-000000000000').replace(/\{\*[A-Za-z_]+\}/g, 'x');
      const tail = path.slice(1); // internal/...
      const attempts = [
        path,
        `/api/user/../../${tail}`,
        `/api/evidence/../../${tail}`,
        `/media/../${tail}`,
        `/api/user/..%2f..%2f${tail}`,
        `/api/user/%2e%2e/%2e%2e/${tail}`,
        `/api/evidence/%2e%2e/%2e%2e/${tail}`,
        `/media/%2e%2e/${tail}`,
        `//${tail}`,
      ];
      for (const caller of CALLERS) {
        for (const attempt of attempts) {
          const { status, body } = await rawRequest(route.method === 'ALL' ? 'GET' : route.method, attempt, cookieOf(clients[caller]));
          // The gateway's own 404 (or, without a built web app, its "not built" page for GETs), or
          // the proxy's 400 for a path with dot segments, which it never forwards.
          const refused =
            status === 404 || (status === 503 && body.includes('not built')) || (status === 400 && body.includes('invalid characters'));
          if (!refused || body.includes('Internal route'))
            failures.push(`${route.method} ${attempt} as ${caller}: ${status} ${body.slice(0, 80)}`);
        }
      }
    }
    expect(failures).toEqual([]);
  });

  it("never serves the services' own metrics through the gateway", async () => {
    for (const caller of CALLERS) {
      const answer = await clients[caller].get('/metrics');
      expect(answer.status === 404 || answer.status === 503).toBe(true);
      expect(answer.text).not.toContain('# HELP');
    }
  });
});

describe('evidence: what the matrix does not show', () => {
  it('lets only the owner or an administrator delete, and nobody twice; a deleted item serves no media', async () => {
    const photo = await ctx.privatePhoto();
    const note = await ctx.ownerNote();
    expect((await clients.owner.delete(`/api/evidence/delete/${note.id}`)).status).toBe(200);
    expect((await clients.owner.delete(`/api/evidence/delete/${note.id}`)).status).toBe(404);
    expect((await clients.admin.delete(`/api/evidence/delete/${note.id}`)).status).toBe(404);
    const doomed = await photoItem(clients.owner, 'Doomed');
    expect((await clients.admin.delete(`/api/evidence/delete/${doomed.id}`)).status).toBe(200);
    expect((await clients.owner.bytes(doomed.aws_url!)).status).toBe(404);
    expect((await clients.owner.bytes(photo.aws_url!)).status).toBe(200);
  });

  it('answers malformed ids and queries with 4xx, never 500', async () => {
    expect((await clients.owner.get('/api/evidence/item/not-a-uuid')).status).toBe(404);
    expect((await clients.owner.put('/api/evidence/update/../../etc', { title: 'x' })).status).toBe(404);
    expect((await clients.owner.get('/api/evidence?type=9')).status).toBe(400);
    expect((await clients.owner.get('/api/evidence?limit=100000')).status).toBe(400);
    expect((await clients.owner.get('/api/evidence?cursor=%%%')).status).toBe(200);
    expect((await clients.visitor.bytes('/media/evidence/00000000-0000-4000-8000-000000000000/display')).status).toBe(404);
    expect((await clients.visitor.bytes('/media/evidence/00000000-0000-4000-8000-000000000000/secret')).status).toBe(404);
  });
});
