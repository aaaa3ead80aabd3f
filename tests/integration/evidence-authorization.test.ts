import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ApiClient } from '../support/api-client.js';
import { adminClient, newParticipant } from '../support/accounts.js';
import { uploadEvidence, waitForMedia, type EvidenceItem } from '../support/evidence.js';
import { makeMediaFixtures, type MediaFixtures } from '../support/media-fixtures.js';
import { startTestPortal, type TestPortal } from '../support/portal.js';

let portal: TestPortal;
let fixtures: MediaFixtures;
let fixtureDir: string;
type Actor = 'visitor' | 'owner' | 'other' | 'admin';
let clients: Record<Actor, ApiClient>;
let ownerId: string;

beforeAll(async () => {
  fixtureDir = mkdtempSync(join(tmpdir(), 'evidence-auth-'));
  [portal, fixtures] = await Promise.all([startTestPortal(), makeMediaFixtures(fixtureDir)]);
  const owner = await newParticipant(portal.url);
  const other = await newParticipant(portal.url);
  ownerId = owner.user.id;
  clients = { visitor: new ApiClient(portal.url), owner: owner.client, other: other.client, admin: (await adminClient(portal.url)).client };
}, 120_000);
afterAll(async () => {
  await portal.dispose();
  rmSync(fixtureDir, { recursive: true, force: true });
});

/** A fresh private photo of the owner, processed. */
async function ownersPhoto(): Promise<EvidenceItem> {
  const created = await uploadEvidence(clients.owner, fixtures.jpegWithGps, { title: 'Auth photo' });
  expect(created.status).toBe(201);
  return waitForMedia(clients.owner, created.data.id);
}

describe('who may call which evidence route', () => {
  it('follows the rules of SPEC section 6 on every route, enforced by the server', async () => {
    const photo = await ownersPhoto();
    const form = () => {
      const data = new FormData();
      data.append('title', 'Renamed');
      data.append('notes', 'changed');
      return data;
    };
    const routes: { name: string; call: (client: ApiClient) => Promise<{ status: number }>; allowed: Record<Actor, number> }[] = [
      { name: 'POST /api/evidence', call: (c) => c.post('/api/evidence', { title: 'A note', notes: 'n' }), allowed: { visitor: 401, owner: 201, other: 201, admin: 201 } },
      { name: 'GET /api/evidence', call: (c) => c.get('/api/evidence'), allowed: { visitor: 401, owner: 200, other: 200, admin: 200 } },
      { name: 'GET /api/evidence/public', call: (c) => c.get('/api/evidence/public'), allowed: { visitor: 200, owner: 200, other: 200, admin: 200 } },
      { name: 'GET /api/evidence/admin', call: (c) => c.get('/api/evidence/admin'), allowed: { visitor: 401, owner: 403, other: 403, admin: 200 } },
      { name: 'GET /api/user/{id}/evidence', call: (c) => c.get(`/api/user/${ownerId}/evidence`), allowed: { visitor: 401, owner: 403, other: 403, admin: 200 } },
      { name: 'GET /api/evidence/item/{id} (private)', call: (c) => c.get(`/api/evidence/item/${photo.id}`), allowed: { visitor: 404, owner: 200, other: 404, admin: 200 } },
      { name: 'GET display media (private)', call: (c) => c.bytes(photo.aws_url!), allowed: { visitor: 404, owner: 200, other: 404, admin: 200 } },
      { name: 'GET original media', call: (c) => c.bytes(photo.aws_url!.replace('/display', '/original')), allowed: { visitor: 404, owner: 200, other: 404, admin: 200 } },
      { name: 'PUT /api/evidence/update/{id}', call: (c) => c.putForm(`/api/evidence/update/${photo.id}`, form()), allowed: { visitor: 401, owner: 200, other: 403, admin: 200 } },
      { name: 'PUT /api/evidence/clearance/{id}', call: (c) => c.put(`/api/evidence/clearance/${photo.id}`), allowed: { visitor: 401, owner: 403, other: 403, admin: 200 } },
      { name: 'PUT /api/evidence/makeAllSecret', call: (c) => c.put('/api/evidence/makeAllSecret'), allowed: { visitor: 401, owner: 403, other: 403, admin: 200 } },
      { name: 'PUT /api/evidence/makeAllPublic', call: (c) => c.put('/api/evidence/makeAllPublic'), allowed: { visitor: 401, owner: 403, other: 403, admin: 200 } },
    ];
    const failures: string[] = [];
    for (const route of routes) {
      for (const actor of ['visitor', 'other', 'owner', 'admin'] as Actor[]) {
        const { status } = await route.call(clients[actor]);
        if (status !== route.allowed[actor]) failures.push(`${route.name} as ${actor}: ${status}, expected ${route.allowed[actor]}`);
      }
    }
    expect(failures).toEqual([]);
  });

  it('lets only the owner or an administrator delete, and nobody twice', async () => {
    const photo = await ownersPhoto();
    expect((await clients.visitor.delete(`/api/evidence/delete/${photo.id}`)).status).toBe(401);
    expect((await clients.other.delete(`/api/evidence/delete/${photo.id}`)).status).toBe(403);
    expect((await clients.owner.delete(`/api/evidence/delete/${photo.id}`)).status).toBe(200);
    expect((await clients.owner.delete(`/api/evidence/delete/${photo.id}`)).status).toBe(404);
    const second = await ownersPhoto();
    expect((await clients.admin.delete(`/api/evidence/delete/${second.id}`)).status).toBe(200);
    expect((await clients.owner.bytes(second.aws_url!)).status).toBe(404);
  });

  it("never shows a participant someone else's items in their own list", async () => {
    await ownersPhoto();
    const theirs = await clients.other.get('/api/evidence?limit=100');
    expect(theirs.data.every((item: EvidenceItem) => item.user_id !== ownerId)).toBe(true);
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
