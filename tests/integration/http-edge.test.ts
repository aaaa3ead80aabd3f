import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { adminClient, newParticipant } from '../support/accounts.js';
import { ApiClient } from '../support/api-client.js';
import { waitForMedia, type EvidenceItem } from '../support/evidence.js';
import { phoneJpeg } from '../support/media.js';
import { startTestPortal, type TestPortal } from '../support/portal.js';
import { multipartBody, rawRequest } from '../support/raw-http.js';

// Ordinary HTTP as browsers, curl and phone upload stacks send it, through the gateway.

let portal: TestPortal;
let participant: { client: ApiClient; user: { id: string } };
let jpeg: Buffer;
/** A photo item only its owner (and administrators) may see, and one published to the archive. */
let privatePhoto: EvidenceItem;
let publicPhoto: EvidenceItem;

async function photoItem(title: string): Promise<EvidenceItem> {
  const form = new FormData();
  form.append('title', title);
  form.append('file', new Blob([new Uint8Array(jpeg)], { type: 'image/jpeg' }), 'photo.jpg');
  const created = await participant.client.postForm('/api/evidence', form);
  expect(created.status, created.text).toBe(201);
  return waitForMedia(participant.client, created.data.id);
}

beforeAll(async () => {
  portal = await startTestPortal({ EVIDENCE_IMAGE_MAX_BYTES: '2mb', EVIDENCE_VIDEO_MAX_BYTES: '3mb', EVIDENCE_AUDIO_MAX_BYTES: '2mb', PHOTO_MAX_BYTES: '1mb' });
  participant = await newParticipant(portal.url);
  jpeg = await phoneJpeg({ width: 320, height: 240 });
  privatePhoto = await photoItem('Private');
  publicPhoto = await photoItem('Public');
  const admin = (await adminClient(portal.url)).client;
  expect((await admin.put(`/api/evidence/clearance/${publicPhoto.id}`)).status).toBe(200);
  publicPhoto = (await participant.client.get(`/api/evidence/item/${publicPhoto.id}`)).data;
  expect(publicPhoto.is_public).toBe(true);
}, 120_000);
afterAll(async () => {
  await portal?.dispose();
});

const cookieOf = (client: ApiClient) => [...client.cookies].map(([name, value]) => `${name}=${value}`).join('; ');

describe('Expect: 100-continue', () => {
  it('a multipart evidence upload that expects 100 Continue gets it and is filed', async () => {
    const { body, contentType } = multipartBody({ title: 'Sent like curl' }, { field: 'file', name: 'photo.jpg', type: 'image/jpeg', bytes: jpeg });
    const answer = await rawRequest(`${portal.url}/api/evidence`, {
      method: 'POST',
      headers: { cookie: cookieOf(participant.client), 'content-type': contentType, 'content-length': String(body.length), expect: '100-continue' },
      body,
    });
    expect(answer.status, answer.body).toBe(201);
    expect(answer.continued).toBe(true);
  });
});

describe('conditional requests of pictures', () => {
  for (const kind of ['verification-photo', 'avatar'] as const) {
    it(`a ${kind} asked for again with the ETag it was sent with is a 304`, async () => {
      if (kind === 'avatar') {
        const { body, contentType } = multipartBody({ email: `${participant.user.id.slice(0, 8)}@example.org`, phone_number: '5551234567' }, { field: 'avatar', name: 'me.jpg', type: 'image/jpeg', bytes: jpeg });
        const saved = await rawRequest(`${portal.url}/api/evidence/user`, {
          method: 'PUT',
          headers: { cookie: cookieOf(participant.client), 'content-type': contentType, 'content-length': String(body.length) },
          body,
        });
        expect(saved.status, saved.body).toBe(200);
      }
      const path = `/api/user/${participant.user.id}/${kind}`;
      const first = await participant.client.bytes(path);
      expect(first.status).toBe(200);
      const etag = first.headers.get('etag')!;
      expect(etag).toMatch(/^"/);
      const again = await rawRequest(`${portal.url}${path}`, { method: 'GET', headers: { cookie: cookieOf(participant.client), 'if-none-match': etag } });
      expect(again.status, again.body).toBe(304);
      expect(again.body).toBe('');
      expect(again.headers.etag).toBe(etag);
    });
  }
});

describe('what a shared phone keeps after logout', () => {
  it('private pictures are never stored: verification photos and private evidence media answer no-store', async () => {
    const verification = await participant.client.bytes(`/api/user/${participant.user.id}/verification-photo`);
    expect(verification.status).toBe(200);
    expect(verification.headers.get('cache-control')).toBe('private, no-store');
    for (const url of [privatePhoto.aws_url!, privatePhoto.thumbnail_url!, `/media/evidence/${privatePhoto.id}/original`]) {
      const media = await participant.client.bytes(url);
      expect(media.status, url).toBe(200);
      expect(media.headers.get('cache-control'), url).toBe('private, no-store');
    }
  });

  it('public media and avatars keep their caching', async () => {
    for (const url of [publicPhoto.aws_url!, publicPhoto.thumbnail_url!]) {
      const media = await new ApiClient(portal.url).bytes(url);
      expect(media.status, url).toBe(200);
      expect(media.headers.get('cache-control'), url).toBe('public, max-age=3600');
    }
    const avatar = await new ApiClient(portal.url).bytes(`/api/user/${participant.user.id}/avatar`);
    expect([200, 404]).toContain(avatar.status);
    if (avatar.status === 200) expect(avatar.headers.get('cache-control')).toMatch(/^public, max-age=/);
  });

  it('logout tells the browser to empty its cache of the portal', async () => {
    const someone = await newParticipant(portal.url);
    const logout = await someone.client.post('/api/user/logout');
    expect(logout.status).toBe(200);
    expect(logout.headers.get('clear-site-data')).toBe('"cache"');
    expect(logout.headers.get('cache-control')).toBe('no-store');
  });
});
