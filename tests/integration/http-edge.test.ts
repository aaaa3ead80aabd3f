import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { adminClient, newParticipant } from '../support/accounts.js';
import { ApiClient } from '../support/api-client.js';
import { waitForMedia, type EvidenceItem } from '../support/evidence.js';
import { phoneJpeg } from '../support/media.js';
import { startTestPortal, type TestPortal } from '../support/portal.js';
import { multipartBody, rawRequest } from '../support/raw-http.js';

// Ordinary HTTP as browsers, curl and phone upload stacks send it, through the gateway.

let portal: TestPortal;
let webDist: string;
let participant: { client: ApiClient; user: { id: string; email: string } };
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
  // A stand-in for the built app, so that these tests do not depend on a web build.
  webDist = mkdtempSync(join(tmpdir(), 'portal-web-'));
  mkdirSync(join(webDist, 'assets'));
  mkdirSync(join(webDist, 'onboarding'));
  writeFileSync(join(webDist, 'index.html'), '<!doctype html><title>app</title><div id="root"></div>');
  writeFileSync(join(webDist, 'assets', 'index-abc123.js'), 'console.log("app");'.repeat(20));
  writeFileSync(join(webDist, 'onboarding', 'onboarding.mp4'), Buffer.alloc(4096, 7));
  portal = await startTestPortal({
    WEB_DIST: webDist,
    EVIDENCE_IMAGE_MAX_BYTES: '2mb',
    EVIDENCE_VIDEO_MAX_BYTES: '3mb',
    EVIDENCE_AUDIO_MAX_BYTES: '2mb',
    PHOTO_MAX_BYTES: '1mb',
  });
  participant = await newParticipant(portal.url);
  jpeg = await phoneJpeg({ width: 320, height: 240 });
  const avatar = new FormData();
  avatar.append('email', participant.user.email);
  avatar.append('phone_number', '5551234567');
  avatar.append('avatar', new Blob([new Uint8Array(jpeg)], { type: 'image/jpeg' }), 'me.jpg');
  expect((await participant.client.putForm('/api/evidence/user', avatar)).status).toBe(200);
  privatePhoto = await photoItem('Private');
  publicPhoto = await photoItem('Public');
  const admin = (await adminClient(portal.url)).client;
  expect((await admin.put(`/api/evidence/clearance/${publicPhoto.id}`)).status).toBe(200);
  publicPhoto = (await participant.client.get(`/api/evidence/item/${publicPhoto.id}`)).data;
  expect(publicPhoto.is_public).toBe(true);
}, 120_000);
afterAll(async () => {
  await portal?.dispose();
  rmSync(webDist, { recursive: true, force: true });
});

const cookieOf = (client: ApiClient) => [...client.cookies].map(([name, value]) => `${name}=${value}`).join('; ');

describe('Expect: 100-continue', () => {
  it('a multipart evidence upload that expects 100 Continue gets it and is filed', async () => {
    const { body, contentType } = multipartBody(
      { title: 'Sent like curl' },
      { field: 'file', name: 'photo.jpg', type: 'image/jpeg', bytes: jpeg },
    );
    const answer = await rawRequest(`${portal.url}/api/evidence`, {
      method: 'POST',
      headers: {
        cookie: cookieOf(participant.client),
        'content-type': contentType,
        'content-length': String(body.length),
        expect: '100-continue',
      },
      body,
    });
    expect(answer.status, answer.body).toBe(201);
    expect(answer.continued).toBe(true);
  });

  it('a body over 1 MB as curl sends it (Expect, then the bytes once told to continue) goes through whole', async () => {
    const bytes = Buffer.alloc(1536 * 1024, 9);
    const tus = { 'tus-resumable': '1.0.0', cookie: cookieOf(participant.client) };
    const created = await rawRequest(`${portal.url}/api/evidence/uploads`, {
      method: 'POST',
      headers: {
        ...tus,
        'upload-length': String(2 * 1024 * 1024),
        'upload-metadata': `title ${Buffer.from('Big').toString('base64')}`,
        'content-length': '0',
      },
      body: '',
    });
    expect(created.status, created.body).toBe(201);
    const patched = await rawRequest(`${portal.url}${created.headers.location}`, {
      method: 'PATCH',
      headers: {
        ...tus,
        'upload-offset': '0',
        'content-type': 'application/offset+octet-stream',
        'content-length': String(bytes.length),
        expect: '100-continue',
      },
      body: bytes,
    });
    expect(patched.status, patched.body).toBe(204);
    expect(patched.continued).toBe(true);
    expect(patched.headers['upload-offset']).toBe(String(bytes.length));
    expect((await participant.client.request('DELETE', created.headers.location!, { headers: { 'tus-resumable': '1.0.0' } })).status).toBe(
      204,
    );
  });

  it('a body declared over the limit is refused with 413 and never told to continue', async () => {
    const answer = await rawRequest(`${portal.url}/api/evidence`, {
      method: 'POST',
      headers: {
        cookie: cookieOf(participant.client),
        'content-type': 'multipart/form-data; boundary=x',
        'content-length': String(175 * 1024 * 1024),
        expect: '100-continue',
      },
    });
    expect(answer.status, answer.body).toBe(413);
    expect(answer.continued).toBe(false);
    expect(JSON.parse(answer.body).message).toBe('The file is too large (at most 3 MB)');
  });
});

describe('conditional requests of pictures', () => {
  for (const kind of ['verification-photo', 'avatar'] as const) {
    it(`a ${kind} asked for again with the ETag it was sent with is a 304`, async () => {
      const path = `/api/user/${participant.user.id}/${kind}`;
      const first = await participant.client.bytes(path);
      expect(first.status).toBe(200);
      const etag = first.headers.get('etag')!;
      expect(etag).toMatch(/^"/);
      const again = await rawRequest(`${portal.url}${path}`, {
        method: 'GET',
        headers: { cookie: cookieOf(participant.client), 'if-none-match': etag },
      });
      expect(again.status, again.body).toBe(304);
      expect(again.body).toBe('');
      expect(again.headers.etag).toBe(etag);
    });
  }
});

describe('what a shared phone keeps after logout', () => {
  it('private pictures are never stored: verification photos, avatars and private evidence media answer no-store', async () => {
    for (const kind of ['verification-photo', 'avatar']) {
      const picture = await participant.client.bytes(`/api/user/${participant.user.id}/${kind}`);
      expect(picture.status, kind).toBe(200);
      expect(picture.headers.get('cache-control'), kind).toBe('private, no-store');
    }
    for (const url of [privatePhoto.aws_url!, privatePhoto.thumbnail_url!, `/media/evidence/${privatePhoto.id}/original`]) {
      const media = await participant.client.bytes(url);
      expect(media.status, url).toBe(200);
      expect(media.headers.get('cache-control'), url).toBe('private, no-store');
    }
  });

  it('public media keep their caching', async () => {
    for (const url of [publicPhoto.aws_url!, publicPhoto.thumbnail_url!]) {
      const media = await new ApiClient(portal.url).bytes(url);
      expect(media.status, url).toBe(200);
      expect(media.headers.get('cache-control'), url).toBe('public, max-age=3600');
    }
    // Avatars are no longer public (docs/SECURITY.md, the archive shows none).
    expect((await new ApiClient(portal.url).bytes(`/api/user/${participant.user.id}/avatar`)).status).toBe(401);
  });

  it('logout tells the browser to empty its cache of the portal', async () => {
    const someone = await newParticipant(portal.url);
    const logout = await someone.client.post('/api/user/logout');
    expect(logout.status).toBe(200);
    expect(logout.headers.get('clear-site-data')).toBe('"cache"');
    expect(logout.headers.get('cache-control')).toBe('no-store');
  });
});

describe('every GET route through the gateway, asked as a browser asks again', () => {
  /** Where the route's answer may be revalidated (304) and asked for in part (206). */
  interface Walk {
    path: string;
    conditional: boolean;
    ranges: boolean;
  }

  /**
   * A concrete request for each GET route the services and the gateway declare (from the running
   * code, so that a new GET route fails here until it is walked too), asked by an administrator
   * (who may see everything) about the participant's things.
   */
  function walks(): Map<string, Walk[]> {
    const ownerId = participant.user.id;
    const at = (path: string, conditional = false, ranges = false): Walk => ({ path, conditional, ranges });
    return new Map<string, Walk[]>([
      ['gateway /api/config', [at('/api/config')]],
      ['gateway /api/openapi.json', [at('/api/openapi.json')]],
      ['gateway /api/user/:id/evidence', [at(`/api/user/${ownerId}/evidence`)]],
      ['gateway /healthz', [at('/healthz')]],
      ['gateway /readyz', [at('/readyz')]],
      ['gateway /', [at('/', true)]],
      ['gateway /*', [at('/home', true), at('/assets/index-abc123.js', true, true), at('/onboarding/onboarding.mp4', true, true)]],
      ['gateway /manifest.webmanifest', [at('/manifest.webmanifest')]],
      ['identity /api/user', [at('/api/user')]],
      ['identity /api/session', [at('/api/session')]],
      ['identity /api/user/verify-email', [at('/api/user/verify-email?token=forged')]],
      ['identity /api/admin/activity', [at('/api/admin/activity?limit=5')]],
      ['identity /api/admin/activity.csv', [at('/api/admin/activity.csv?action=admin.login')]],
      ['evidence /api/evidence/export', [at(`/api/evidence/export?ids=${privatePhoto.id}`)]],
      ['evidence /api/evidence/admin/counts', [at('/api/evidence/admin/counts')]],
      ['evidence /api/evidence/:id/faces', [at(`/api/evidence/${privatePhoto.id}/faces`)]],
      ['identity /api/user/users', [at('/api/user/users')]],
      ['identity /api/user/:id/export', [at(`/api/user/${ownerId}/export`)]],
      ['identity /api/user/:id/avatar', [at(`/api/user/${ownerId}/avatar`, true)]],
      ['identity /api/appointments', [at('/api/appointments?date=2026-12-01')]],
      ['identity /api/appointments/mine', [at('/api/appointments/mine')]],
      ['identity /api/appointments/mine.ics', [at('/api/appointments/mine.ics')]],
      ['identity /api/appointments/user/:id', [at(`/api/appointments/user/${ownerId}`)]],
      ['identity /api/appointments/:id', [at('/api/appointments/00000000-0000-4000-8000-000000000000')]],
      ['identity /api/user/:id/verification-photo', [at(`/api/user/${ownerId}/verification-photo`, true)]],
      ['evidence /api/evidence/uploads', [at('/api/evidence/uploads')]],
      ['evidence /api/evidence/uploads/{*rest}', [at(`/api/evidence/uploads/${ownerId}.0123456789abcdef0123456789abcdef`)]],
      [
        'evidence /media/evidence/:id/:variant',
        ['display', 'thumb', 'original']
          .map((variant) => at(`/media/evidence/${privatePhoto.id}/${variant}`, true, true))
          .concat(at(publicPhoto.aws_url!, true, true)),
      ],
      ['evidence /api/evidence', [at('/api/evidence')]],
      ['evidence /api/evidence/public', [at('/api/evidence/public')]],
      ['evidence /api/evidence/admin', [at('/api/evidence/admin')]],
      ['evidence /api/user/:id/evidence', [at(`/api/user/${ownerId}/evidence`)]],
      ['evidence /api/evidence/item/:id', [at(`/api/evidence/item/${privatePhoto.id}`), at(`/api/evidence/item/${publicPhoto.id}`)]],
    ]);
  }

  /** Reached through the gateway's proxy prefixes, or only inside the cluster (never through the gateway). */
  const NOT_WALKED =
    /^(gateway \/(api\/(user|email|evidence|admin|session|appointments)(\/\*)?|media(\/\*)?|api\/\*)|(identity|evidence) \/(healthz|readyz|metrics|internal\/.*))$/;

  it('walks every GET route the code declares', () => {
    const declared = Object.entries(portal.routes!())
      .flatMap(([service, routes]) => routes.filter((route) => route.method === 'GET').map((route) => `${service} ${route.path}`))
      .filter((key) => !NOT_WALKED.test(key));
    const walked = new Set(walks().keys());
    expect(declared.filter((key) => !walked.has(key))).toEqual([]);
  });

  it('answers If-None-Match, If-Modified-Since and Range without a 5xx: 304 and 206 where the route supports them', async () => {
    const admin = (await adminClient(portal.url)).client;
    const cookie = cookieOf(admin);
    const ask = (path: string, headers: Record<string, string> = {}) =>
      rawRequest(`${portal.url}${path}`, { method: 'GET', headers: { cookie, 'accept-encoding': 'gzip, br', ...headers } });
    const problems: string[] = [];
    const check = (what: string, ok: boolean) => {
      if (!ok) problems.push(what);
    };
    for (const [route, list] of walks()) {
      for (const walk of list) {
        const what = `${route} (${walk.path})`;
        const plain = await ask(walk.path);
        check(`${what}: plain GET answered ${plain.status}`, plain.status < 500);
        const etag = plain.headers.etag;
        const lastModified = plain.headers['last-modified'];
        // A browser revalidating sends both validators it was given.
        const both = await ask(walk.path, {
          'if-none-match': etag ?? '"not-this-one"',
          'if-modified-since': lastModified ?? 'Tue, 01 Jan 2030 00:00:00 GMT',
        });
        check(`${what}: If-None-Match + If-Modified-Since answered ${both.status} ${both.body.slice(0, 120)}`, both.status < 500);
        if (walk.conditional) {
          check(`${what}: sends an ETag`, typeof etag === 'string');
          check(`${what}: revalidation answered ${both.status}, not 304`, both.status === 304 && both.body === '');
          check(`${what}: the 304 carries its ETag`, both.headers.etag === etag);
          if (lastModified) {
            const since = await ask(walk.path, { 'if-modified-since': lastModified });
            check(`${what}: If-Modified-Since alone answered ${since.status}, not 304`, since.status === 304);
          }
          const stale = await ask(walk.path, { 'if-none-match': '"an-older-version"' });
          check(`${what}: a stale ETag answered ${stale.status}, not ${plain.status}`, stale.status === plain.status);
        }
        const range = await ask(walk.path, { range: 'bytes=0-9' });
        check(`${what}: Range answered ${range.status}`, range.status < 500);
        if (walk.ranges) {
          check(
            `${what}: Range answered ${range.status}, not 206`,
            range.status === 206 && range.headers['content-range']?.startsWith('bytes 0-9/') === true,
          );
          const ifRange = await ask(walk.path, { range: 'bytes=0-9', 'if-range': etag ?? '' });
          check(`${what}: If-Range with the current ETag answered ${ifRange.status}, not 206`, ifRange.status === 206);
          const outside = await ask(walk.path, { range: 'bytes=999999999-' });
          check(`${what}: a range outside the file answered ${outside.status}, not 416`, outside.status === 416);
        }
      }
    }
    expect(problems).toEqual([]);
  });
});

describe('every upload route, with and without Expect: 100-continue', () => {
  const b64 = (value: string) => Buffer.from(value).toString('base64');

  for (const expect100 of [false, true]) {
    const expectation: Record<string, string> = expect100 ? { expect: '100-continue' } : {};
    const label = expect100 ? 'with Expect: 100-continue' : 'without Expect';

    it(`multipart uploads succeed ${label}`, async () => {
      const send = (method: string, path: string, cookie: string, form: { body: Buffer; contentType: string }) =>
        rawRequest(`${portal.url}${path}`, {
          method,
          headers: { cookie, 'content-type': form.contentType, 'content-length': String(form.body.length), ...expectation },
          body: form.body,
        });
      const photo = { field: 'file', name: 'photo.jpg', type: 'image/jpeg', bytes: jpeg };

      const tag = `${Date.now().toString(36)}${expect100 ? 'e' : 'p'}`;
      const registration = multipartBody(
        {
          username: `edge_${tag}`,
          password: 'password1',
          email: `edge_${tag}@example.org`,
          phone_number: '5551234567',
          full_name: 'Edge Case',
          pronouns: 'They/Them',
          role: '1',
        },
        { ...photo, field: 'verification_photo' },
      );
      const registered = await send('POST', '/api/user/register', '', registration);
      expect(registered.status, registered.body).toBe(201);
      expect(registered.continued).toBe(expect100);

      const cookie = cookieOf(participant.client);
      const created = await send('POST', '/api/evidence', cookie, multipartBody({ title: `Photo ${label}` }, photo));
      expect(created.status, created.body).toBe(201);
      expect(created.continued).toBe(expect100);
      const id = JSON.parse(created.body).id as string;
      await waitForMedia(participant.client, id);

      const replaced = await send('PUT', `/api/evidence/update/${id}`, cookie, multipartBody({ title: `Replaced ${label}` }, photo));
      expect(replaced.status, replaced.body).toBe(200);

      const avatar = await send(
        'PUT',
        '/api/evidence/user',
        cookie,
        multipartBody({ email: participant.user.email, phone_number: '5551234567' }, { ...photo, field: 'avatar' }),
      );
      expect(avatar.status, avatar.body).toBe(200);
      expect(avatar.continued).toBe(expect100);
    });

    it(`a resumable upload succeeds ${label}`, async () => {
      const cookie = cookieOf(participant.client);
      const tus = { 'tus-resumable': '1.0.0', cookie };
      const created = await rawRequest(`${portal.url}/api/evidence/uploads`, {
        method: 'POST',
        headers: {
          ...tus,
          'upload-length': String(jpeg.length),
          'upload-metadata': `title ${b64(`Resumable ${label}`)},filename ${b64('photo.jpg')}`,
          'content-length': '0',
          ...expectation,
        },
        body: '',
      });
      expect(created.status, created.body).toBe(201);
      const location = created.headers.location!;
      const half = Math.floor(jpeg.length / 2);
      const first = await rawRequest(`${portal.url}${location}`, {
        method: 'PATCH',
        headers: {
          ...tus,
          'upload-offset': '0',
          'content-type': 'application/offset+octet-stream',
          'content-length': String(half),
          ...expectation,
        },
        body: jpeg.subarray(0, half),
      });
      expect(first.status, first.body).toBe(204);
      expect(first.continued).toBe(expect100);
      const last = await rawRequest(`${portal.url}${location}`, {
        method: 'PATCH',
        headers: {
          ...tus,
          'upload-offset': String(half),
          'content-type': 'application/offset+octet-stream',
          'content-length': String(jpeg.length - half),
          ...expectation,
        },
        body: jpeg.subarray(half),
      });
      expect(last.status, last.body).toBe(200);
      expect(JSON.parse(last.body).title).toBe(`Resumable ${label}`);
    });
  }
});
