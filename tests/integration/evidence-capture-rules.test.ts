/**
 * The rules around adding evidence that the web app's outbox relies on: the session probe that
 * never answers 401, the onboarding gate on evidence creation (on the server, not only in the app),
 * and the idempotency key that makes a repeated completion one item.
 */
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MESSAGES } from '@portal/contracts';
import { ApiClient } from '../support/api-client.js';
import { adminClient, newParticipant } from '../support/accounts.js';
import { phoneJpeg } from '../support/media.js';
import { startTestPortal, type TestPortal } from '../support/portal.js';

let portal: TestPortal;
beforeAll(async () => {
  portal = await startTestPortal();
}, 120_000);
afterAll(async () => {
  await portal?.dispose();
});

const TUS = { 'tus-resumable': '1.0.0' };
const b64 = (value: string) => Buffer.from(value).toString('base64');

function createUpload(client: ApiClient, length: number, metadata: Record<string, string>) {
  const header = Object.entries(metadata)
    .map(([key, value]) => `${key} ${b64(value)}`)
    .join(',');
  return client.request('POST', '/api/evidence/uploads', {
    headers: { ...TUS, 'upload-length': String(length), 'upload-metadata': header },
  });
}

function patchAll(client: ApiClient, location: string, body: Buffer) {
  return fetch(new URL(location, portal.url), {
    method: 'PATCH',
    headers: {
      ...TUS,
      'upload-offset': '0',
      'content-type': 'application/offset+octet-stream',
      cookie: [...client.cookies].map(([name, value]) => `${name}=${value}`).join('; '),
    },
    body: new Uint8Array(body),
  });
}

async function ownItems(client: ApiClient): Promise<{ id: string; title: string }[]> {
  const list = await client.get('/api/evidence?limit=100');
  expect(list.status).toBe(200);
  return list.data as { id: string; title: string }[];
}

describe('GET /api/session', () => {
  it('answers 200 with user null to a visitor and to a forged cookie, and the user to a signed-in caller', async () => {
    const visitor = await new ApiClient(portal.url).get('/api/session');
    expect(visitor.status).toBe(200);
    expect(visitor.data).toEqual({ user: null });
    expect(visitor.headers.get('cache-control')).toContain('no-store');
    const forged = await new ApiClient(portal.url).get('/api/session', { cookie: 'portal_session=forged' });
    expect(forged.status).toBe(200);
    expect(forged.data).toEqual({ user: null });
    const { client, user } = await newParticipant(portal.url);
    const signedIn = await client.get('/api/session');
    expect(signedIn.status).toBe(200);
    expect(signedIn.data).toMatchObject({ user: { id: user.id, username: user.username, video_watched: true } });
    // SPEC's GET /api/user is unchanged.
    expect((await new ApiClient(portal.url).get('/api/user')).status).toBe(401);
  });
});

describe('the onboarding gate on evidence creation', () => {
  it('refuses a note, a whole file and a resumable upload from a participant who has not watched, then takes them', async () => {
    const { client, user } = await newParticipant(portal.url, {}, undefined, { watched: false });
    const note = await client.post('/api/evidence', { title: 'Too early', notes: '' });
    expect(note.status).toBe(403);
    expect(note.data).toMatchObject({ code: 'forbidden', message: MESSAGES.watchVideoFirst });
    const form = new FormData();
    form.append('title', 'Too early');
    form.append('file', new Blob([new Uint8Array(await phoneJpeg())], { type: 'image/jpeg' }), 'photo.jpg');
    const file = await client.postForm('/api/evidence', form);
    expect(file.status).toBe(403);
    expect(file.data).toMatchObject({ message: MESSAGES.watchVideoFirst });
    const upload = await createUpload(client, 10, { title: 'Too early' });
    expect(upload.status).toBe(403);
    expect(upload.data).toMatchObject({ message: MESSAGES.watchVideoFirst });
    expect(await ownItems(client)).toEqual([]);

    // Watching the video opens evidence at once (the gateway forgets the cached session).
    expect((await client.put(`/api/user/watched/${user.id}`)).status).toBe(200);
    expect((await client.post('/api/evidence', { title: 'Now', notes: '' })).status).toBe(201);
    expect((await createUpload(client, 10, { title: 'Now' })).status).toBe(201);
  });

  it('lets an administrator add evidence without the video', async () => {
    const { client } = await adminClient(portal.url);
    expect((await client.post('/api/evidence', { title: 'Admin note', notes: '' })).status).toBe(201);
  });
});

describe('the idempotency key', () => {
  it('makes one note of a note sent twice, per owner', async () => {
    const { client } = await newParticipant(portal.url);
    const key = `note-${randomUUID()}`;
    const first = await client.request('POST', '/api/evidence', {
      json: { title: 'Once', notes: 'n' },
      headers: { 'idempotency-key': key },
    });
    expect(first.status).toBe(201);
    const again = await client.request('POST', '/api/evidence', {
      json: { title: 'Once', notes: 'n' },
      headers: { 'idempotency-key': key },
    });
    expect(again.status).toBe(200);
    expect((again.data as { id: string }).id).toBe((first.data as { id: string }).id);
    const both = await Promise.all(
      [1, 2, 3].map(() =>
        client.request('POST', '/api/evidence', { json: { title: 'Raced', notes: '' }, headers: { 'idempotency-key': `${key}-raced` } }),
      ),
    );
    expect(new Set(both.map((answer) => (answer.data as { id: string }).id)).size).toBe(1);
    expect((await ownItems(client)).map((item) => item.title).sort()).toEqual(['Once', 'Raced']);

    // Someone else's key of the same text is their own.
    const other = await newParticipant(portal.url);
    expect(
      (await other.client.request('POST', '/api/evidence', { json: { title: 'Theirs', notes: '' }, headers: { 'idempotency-key': key } }))
        .status,
    ).toBe(201);

    const bad = await client.request('POST', '/api/evidence', {
      json: { title: 'Bad key', notes: '' },
      headers: { 'idempotency-key': 'no spaces allowed' },
    });
    expect(bad.status).toBe(400);
    expect((bad.data as { message: string }).message).toMatch(/idempotency key/);
  });

  it('makes one item of two resumable uploads of the same capture that both complete', async () => {
    const { client } = await newParticipant(portal.url);
    const photo = await phoneJpeg();
    const idempotencyKey = `photo-${randomUUID()}`;
    const first = await createUpload(client, photo.length, {
      title: 'Street corner',
      filename: 'p.jpg',
      filetype: 'image/jpeg',
      idempotencyKey,
    });
    const second = await createUpload(client, photo.length, {
      title: 'Street corner',
      filename: 'p.jpg',
      filetype: 'image/jpeg',
      idempotencyKey,
    });
    expect([first.status, second.status]).toEqual([201, 201]);
    const firstDone = await patchAll(client, String(first.headers.get('location')), photo);
    expect(firstDone.status).toBe(200);
    const firstItem = (await firstDone.json()) as { id: string };
    // The second upload (the phone lost the first answer and sent the capture again) completes too.
    const secondDone = await patchAll(client, String(second.headers.get('location')), photo);
    expect(secondDone.status).toBe(200);
    expect(((await secondDone.json()) as { id: string }).id).toBe(firstItem.id);
    expect(secondDone.headers.get('x-evidence-id')).toBe(firstItem.id);
    expect((await ownItems(client)).filter((item) => item.title === 'Street corner')).toHaveLength(1);

    const bad = await createUpload(client, 10, { title: 'Bad key', idempotencyKey: 'x' });
    expect(bad.status).toBe(400);
  });
});
