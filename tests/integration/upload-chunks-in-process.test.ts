import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SignJWT } from 'jose';
import { MESSAGES } from '@portal/contracts';
import { IDENTITY_HEADER } from '@portal/platform';
import { ApiClient } from '../support/api-client.js';
import { newParticipant } from '../support/accounts.js';
import { startTestPortal, type TestPortal } from '../support/portal.js';
import { rawRequest, type RawAnswer } from '../support/raw-http.js';

// The all-in-one gateway hands the chunks of a resumable upload (PATCH) to the evidence service
// inside the process instead of over loopback HTTP (UPLOADS_IN_PROCESS). Whichever way a chunk
// travels, the service must see the gateway's identity and never the client's, refuse a chunk of
// someone else's upload every time, and answer with the gateway's own headers. The same checks
// run against a portal that proxies the chunks (UPLOADS_IN_PROCESS=false).

const TUS = { 'tus-resumable': '1.0.0' };
const cookieOf = (client: ApiClient) => [...client.cookies].map(([name, value]) => `${name}=${value}`).join('; ');

/** An identity token as a client could make one: signed, but not with the portal's secret. */
function forgedIdentity(userId: string): Promise<string> {
  return new SignJWT({ role: 2, username: 'evil', sid: 'x', videoWatched: true })
    .setProtectedHeader({ alg: 'HS256' })
    .setSubject(userId)
    .setIssuer('portal-gateway')
    .setAudience('portal-services')
    .setExpirationTime('1m')
    .sign(new TextEncoder().encode('a-guessed-secret-that-is-long-enough-000'));
}

describe.each([
  { mode: 'handed over in the process', inProcess: 'true' },
  { mode: 'proxied over loopback', inProcess: 'false' },
])('resumable chunks $mode', ({ inProcess }) => {
  let portal: TestPortal;
  let owner: Awaited<ReturnType<typeof newParticipant>>;
  let other: Awaited<ReturnType<typeof newParticipant>>;

  beforeAll(async () => {
    portal = await startTestPortal({ UPLOADS_IN_PROCESS: inProcess, EVIDENCE_VIDEO_MAX_BYTES: '2mb' });
    [owner, other] = await Promise.all([newParticipant(portal.url), newParticipant(portal.url)]);
  }, 60_000);
  afterAll(async () => {
    await portal?.dispose();
  });

  async function createUpload(client: ApiClient, length: number): Promise<string> {
    const created = await client.request('POST', '/api/evidence/uploads', {
      headers: { ...TUS, 'upload-length': String(length), 'upload-metadata': `title ${Buffer.from('Chunks').toString('base64')}` },
    });
    expect(created.status, created.text).toBe(201);
    return new URL(created.headers.get('location')!, portal.url).href;
  }

  function patch(location: string, offset: number, body: Buffer, headers: Record<string, string>): Promise<RawAnswer> {
    return rawRequest(location, {
      method: 'PATCH',
      headers: {
        ...TUS,
        'upload-offset': String(offset),
        'content-type': 'application/offset+octet-stream',
        'content-length': String(body.length),
        ...headers,
      },
      body,
    });
  }

  async function offsetOf(location: string): Promise<number> {
    const head = await owner.client.request('HEAD', new URL(location).pathname, { headers: TUS });
    expect(head.status).toBe(200);
    return Number(head.headers.get('upload-offset'));
  }

  it("stores a chunk as the gateway's caller, whatever identity header the client adds, and answers with the gateway's headers", async () => {
    const location = await createUpload(owner.client, 3000);
    const forged = await forgedIdentity(other.user.id);
    const answer = await patch(location, 0, Buffer.alloc(1000, 1), { cookie: cookieOf(owner.client), [IDENTITY_HEADER]: forged });
    expect(answer.status, answer.body).toBe(204);
    expect(answer.headers['upload-offset']).toBe('1000');
    expect(answer.headers['tus-resumable']).toBe('1.0.0');
    expect(answer.headers['x-request-id']).toMatch(/^[\w.-]+$/);
    expect(answer.headers['x-content-type-options']).toBe('nosniff');
    expect(answer.headers['permissions-policy']).toContain('camera=(self)');
    expect(await offsetOf(location)).toBe(1000);
  });

  it('opens nothing with a forged identity header and no session', async () => {
    const location = await createUpload(owner.client, 3000);
    const answer = await patch(location, 0, Buffer.alloc(1000, 1), { [IDENTITY_HEADER]: await forgedIdentity(owner.user.id) });
    expect(answer.status, answer.body).toBe(401);
    expect(answer.headers['content-type']).toMatch(/^application\/json/);
    expect(JSON.parse(answer.body).message).toBe(MESSAGES.notSignedIn);
    expect(await offsetOf(location)).toBe(0);
  });

  it("refuses every chunk of someone else's upload, before and after its owner's", async () => {
    const location = await createUpload(owner.client, 3000);
    const foreign = { cookie: cookieOf(other.client) };
    const before = await patch(location, 0, Buffer.alloc(1000, 2), foreign);
    expect(before.status, before.body).toBe(403);
    expect(JSON.parse(before.body).message).toBe(MESSAGES.uploadNotYours);
    expect((await patch(location, 0, Buffer.alloc(1000, 1), { cookie: cookieOf(owner.client) })).status).toBe(204);
    // The owner is known now (remembered by the service): the check still holds, for PATCH and HEAD.
    const after = await patch(location, 1000, Buffer.alloc(1000, 2), foreign);
    expect(after.status, after.body).toBe(403);
    expect(JSON.parse(after.body).message).toBe(MESSAGES.uploadNotYours);
    expect((await other.client.request('HEAD', new URL(location).pathname, { headers: TUS })).status).toBe(403);
    expect(await offsetOf(location)).toBe(1000);
  });

  it('refuses a chunk past the declared length with 413 and keeps the offset', async () => {
    const location = await createUpload(owner.client, 1500);
    const answer = await patch(location, 0, Buffer.alloc(2000, 1), { cookie: cookieOf(owner.client) });
    expect(answer.status, answer.body).toBe(413);
    expect(answer.headers['content-type']).toMatch(/^application\/json/);
    expect(await offsetOf(location)).toBe(0);
  });

  it('takes a chunk whatever Host and Connection headers the client sends, never with a 5xx', async () => {
    const location = await createUpload(owner.client, 3000);
    const cookie = cookieOf(owner.client);
    const odd = await patch(location, 0, Buffer.alloc(1000, 1), {
      cookie,
      host: 'not a host name',
      connection: 'keep-alive, upload-offset',
    });
    expect(odd.status, odd.body).toBeLessThan(500);
    const plain = await patch(location, await offsetOf(location), Buffer.alloc(500, 1), { cookie, host: 'portal.example:99999' });
    expect(plain.status, plain.body).toBeLessThan(500);
  });

  it('answers a chunk at the wrong offset with 409 and the chunk at the stored offset with 204', async () => {
    const location = await createUpload(owner.client, 3000);
    const cookie = { cookie: cookieOf(owner.client) };
    expect((await patch(location, 0, Buffer.alloc(1000, 1), cookie)).status).toBe(204);
    const stale = await patch(location, 0, Buffer.alloc(1000, 1), cookie);
    expect(stale.status, stale.body).toBe(409);
    expect((await patch(location, 1000, Buffer.alloc(1000, 1), cookie)).status).toBe(204);
    expect(await offsetOf(location)).toBe(2000);
  });
});
