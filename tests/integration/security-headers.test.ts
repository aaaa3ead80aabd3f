import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ApiClient } from '../support/api-client.js';
import { newParticipant, adminClient } from '../support/accounts.js';
import { waitForMedia, type EvidenceItem } from '../support/evidence.js';
import { phoneJpeg, photoBlob } from '../support/media.js';
import { TEST_ADMIN, startTestPortal, type TestPortal } from '../support/portal.js';

let webDist: string;
/** Plain HTTP, default settings (TRUST_PROXY off, COOKIE_SECURE auto). */
let plain: TestPortal;
/** Behind a TLS-terminating proxy that says so in X-Forwarded-Proto. */
let proxied: TestPortal;
/** COOKIE_SECURE=true: Secure whatever the request says. */
let forcedSecure: TestPortal;
let owner: ApiClient;
let ownerId: string;
let photo: EvidenceItem;

beforeAll(async () => {
  // A stand-in for the built app, so that these tests do not depend on a web build.
  webDist = mkdtempSync(join(tmpdir(), 'portal-web-'));
  mkdirSync(join(webDist, 'assets'));
  writeFileSync(join(webDist, 'index.html'), '<!doctype html><title>app</title><div id="root"></div>');
  writeFileSync(join(webDist, 'assets', 'index-abc123.js'), 'console.log("app")');
  [plain, proxied, forcedSecure] = await Promise.all([
    startTestPortal({ WEB_DIST: webDist }),
    startTestPortal({ WEB_DIST: webDist, TRUST_PROXY: 'true' }),
    startTestPortal({ WEB_DIST: webDist, COOKIE_SECURE: 'true' }),
  ]);
  const participant = await newParticipant(plain.url);
  owner = participant.client;
  ownerId = participant.user.id;
  const form = new FormData();
  form.append('title', 'Headers');
  form.append('file', photoBlob(await phoneJpeg({ width: 320, height: 240 })), 'photo.jpg');
  const created = await owner.postForm('/api/evidence', form);
  expect(created.status).toBe(201);
  photo = await waitForMedia(owner, created.data.id);
  const avatar = new FormData();
  avatar.append('email', participant.user.email);
  avatar.append('phone_number', '5551234567');
  avatar.append('avatar', photoBlob(await phoneJpeg({ width: 64, height: 64 })), 'me.jpg');
  expect((await owner.putForm('/api/evidence/user', avatar)).status).toBe(200);
}, 120_000);
afterAll(async () => {
  await Promise.all([plain?.dispose(), proxied?.dispose(), forcedSecure?.dispose()]);
  rmSync(webDist, { recursive: true, force: true });
});

const cookieHeader = (client: ApiClient) => [...client.cookies].map(([name, value]) => `${name}=${value}`).join('; ');

/** The headers every answer of the portal carries, whatever made it (page, API, proxy, media, error). */
function expectSecurityHeaders(what: string, headers: Headers, { https = false } = {}) {
  const csp = headers.get('content-security-policy');
  expect(csp, what).toBeTruthy();
  // One policy, not two stacked (a proxied answer must not add its own).
  expect(csp!.match(/default-src/g), what).toHaveLength(1);
  const directives = new Map(
    csp!.split(';').map((part) => {
      const [name, ...values] = part.trim().split(/\s+/);
      return [name!, values] as const;
    }),
  );
  expect(directives.get('default-src'), what).toEqual(["'self'"]);
  expect(directives.get('script-src'), what).toEqual(["'self'"]);
  expect(directives.get('object-src'), what).toEqual(["'none'"]);
  expect(directives.get('frame-ancestors'), what).toEqual(["'none'"]);
  expect(directives.get('base-uri'), what).toEqual(["'self'"]);
  expect(directives.get('form-action'), what).toEqual(["'self'"]);
  expect(csp, what).not.toContain('unsafe-eval');
  expect(headers.get('x-content-type-options'), what).toBe('nosniff');
  expect(headers.get('x-frame-options'), what).toBe('DENY');
  expect(headers.get('referrer-policy'), what).toBe('strict-origin-when-cross-origin');
  expect(headers.get('cross-origin-opener-policy'), what).toBe('same-origin');
  expect(headers.get('cross-origin-resource-policy'), what).toBe('same-site');
  const permissions = headers.get('permissions-policy') ?? '';
  for (const rule of ['camera=(self)', 'microphone=(self)', 'geolocation=(self)', 'payment=()', 'usb=()'])
    expect(permissions, what).toContain(rule);
  expect(headers.get('x-powered-by'), what).toBeNull();
  expect(headers.get('x-request-id'), what).toMatch(/^[A-Za-z0-9._-]+$/);
  if (https) expect(headers.get('strict-transport-security'), what).toMatch(/^max-age=\d{7,}/);
  else expect(headers.get('strict-transport-security'), what).toBeNull();
}

async function get(base: string, path: string, headers: Record<string, string> = {}, method = 'GET') {
  return fetch(new URL(path, base), { method, headers, redirect: 'manual' });
}

describe('security headers', () => {
  it('are on every kind of answer: pages, assets, API, proxied API, errors, media, pictures, uploads', async () => {
    const cookie = cookieHeader(owner);
    const admin = await adminClient(plain.url);
    const publicPhoto = await admin.client.put(
      `/api/evidence/clearance/${(await owner.post('/api/evidence', { title: 'Public note' })).data.id}`,
    );
    expect(publicPhoto.status).toBe(200);
    const answers: [string, Response][] = [
      ['the app page', await get(plain.url, '/home')],
      ['an unknown page', await get(plain.url, '/no/such/page')],
      ['a hashed asset', await get(plain.url, '/assets/index-abc123.js')],
      ['the configuration (the gateway itself)', await get(plain.url, '/api/config')],
      ['the signed-in user (proxied to identity)', await get(plain.url, '/api/user', { cookie })],
      ['a 401 from identity', await get(plain.url, '/api/user')],
      ['an own list (proxied to evidence)', await get(plain.url, '/api/evidence', { cookie })],
      ['a 403 from evidence', await get(plain.url, '/api/evidence/admin', { cookie })],
      ['an unknown API path', await get(plain.url, '/api/nothing-here')],
      [
        'a refused cross-site write',
        await fetch(`${plain.url}/api/user/logout`, { method: 'POST', headers: { origin: 'https://evil.example', cookie } }),
      ],
      ['media, whole', await get(plain.url, photo.aws_url!, { cookie })],
      ['media, a range', await get(plain.url, photo.aws_url!, { cookie, range: 'bytes=0-99' })],
      [
        'media, not modified',
        await get(plain.url, photo.aws_url!, {
          cookie,
          'if-none-match': (await get(plain.url, photo.aws_url!, { cookie })).headers.get('etag')!,
        }),
      ],
      ['media, HEAD', await get(plain.url, photo.aws_url!, { cookie }, 'HEAD')],
      ['media, refused', await get(plain.url, photo.aws_url!)],
      ['an original', await get(plain.url, photo.aws_url!.replace('/display', '/original'), { cookie })],
      ["an avatar (its owner's: avatars are not public)", await get(plain.url, `/api/user/${ownerId}/avatar`, { cookie })],
      ['a verification photo', await get(plain.url, `/api/user/${ownerId}/verification-photo`, { cookie })],
      [
        'a resumable upload, created',
        await fetch(`${plain.url}/api/evidence/uploads`, {
          method: 'POST',
          headers: {
            cookie,
            'tus-resumable': '1.0.0',
            'upload-length': '10',
            'upload-metadata': `title ${Buffer.from('t').toString('base64')}`,
          },
        }),
      ],
      ['a resumable upload, discovery', await get(plain.url, '/api/evidence/uploads', {}, 'OPTIONS')],
      ['health', await get(plain.url, '/healthz')],
    ];
    const statuses = Object.fromEntries(answers.map(([what, response]) => [what, response.status]));
    expect(statuses).toEqual({
      'the app page': 200,
      'an unknown page': 404,
      'a hashed asset': 200,
      'the configuration (the gateway itself)': 200,
      'the signed-in user (proxied to identity)': 200,
      'a 401 from identity': 401,
      'an own list (proxied to evidence)': 200,
      'a 403 from evidence': 403,
      'an unknown API path': 404,
      'a refused cross-site write': 403,
      'media, whole': 200,
      'media, a range': 206,
      'media, not modified': 304,
      'media, HEAD': 200,
      'media, refused': 404,
      'an original': 200,
      "an avatar (its owner's: avatars are not public)": 200,
      'a verification photo': 200,
      'a resumable upload, created': 201,
      'a resumable upload, discovery': 204,
      health: 200,
    });
    for (const [what, response] of answers) expectSecurityHeaders(what, response.headers);
  });

  it('keep private answers out of shared caches and make originals a download', async () => {
    const cookie = cookieHeader(owner);
    const me = await get(plain.url, '/api/user', { cookie });
    expect(me.headers.get('cache-control')).toBe('no-store');
    const display = await get(plain.url, photo.aws_url!, { cookie });
    expect(display.headers.get('cache-control')).toMatch(/^private/);
    expect(display.headers.get('vary')).toMatch(/cookie/i);
    const original = await get(plain.url, photo.aws_url!.replace('/display', '/original'), { cookie });
    expect(original.headers.get('cache-control')).toBe('private, no-store');
    expect(original.headers.get('content-disposition')).toBe('attachment');
    const verification = await get(plain.url, `/api/user/${ownerId}/verification-photo`, { cookie });
    expect(verification.headers.get('cache-control')).toMatch(/^private/);
    expect(verification.headers.get('vary')).toMatch(/cookie/i);
  });

  it('add HSTS only to answers that went out over HTTPS, as a trusted proxy reports it', async () => {
    const https = { 'x-forwarded-proto': 'https' };
    for (const path of ['/home', '/api/config', '/api/user', '/api/nothing-here']) {
      expectSecurityHeaders(`${path} over https`, (await get(proxied.url, path, https)).headers, { https: true });
      expectSecurityHeaders(`${path} over http`, (await get(proxied.url, path)).headers, { https: false });
      // Without TRUST_PROXY the claim is not believed.
      expectSecurityHeaders(`${path} claimed https, untrusted`, (await get(plain.url, path, https)).headers, { https: false });
    }
  });
});

describe('the session cookie', () => {
  function sessionCookie(response: { headers: Headers }): string {
    const line = response.headers.getSetCookie().find((value) => value.startsWith('portal_session='));
    expect(line).toBeTruthy();
    return line!;
  }
  const attributes = (line: string) =>
    new Map(
      line
        .split(';')
        .slice(1)
        .map((part) => {
          const [name, ...value] = part.trim().split('=');
          return [name!.toLowerCase(), value.join('=')] as const;
        }),
    );

  async function loginAndLogout(base: string, headers: Record<string, string> = {}) {
    const client = new ApiClient(base);
    const login = await client.request('POST', '/api/user/login', {
      json: { username: TEST_ADMIN.username, password: TEST_ADMIN.password },
      headers,
    });
    expect(login.status).toBe(200);
    const logout = await client.request('POST', '/api/user/logout', { headers });
    expect(logout.status).toBe(200);
    return { login: sessionCookie(login), logout: sessionCookie(logout) };
  }

  it('is HttpOnly, SameSite=Lax, Path=/, host-only, lasts the idle period, and is not Secure over plain HTTP', async () => {
    const { login, logout } = await loginAndLogout(plain.url);
    const set = attributes(login);
    expect(set.has('httponly')).toBe(true);
    expect(set.get('samesite')).toBe('Lax');
    expect(set.get('path')).toBe('/');
    expect(set.has('domain')).toBe(false);
    expect(set.has('secure')).toBe(false);
    expect(Number(set.get('max-age'))).toBe(14 * 24 * 3600);
    // The value is an opaque random id: long, and nothing a person could read.
    const value = login.split(';')[0]!.slice('portal_session='.length);
    expect(value.length).toBeGreaterThanOrEqual(43);
    expect(value).not.toContain(TEST_ADMIN.username);
    // Logout clears it with the same attributes, so the browser really drops it.
    const cleared = attributes(logout);
    expect(logout.split(';')[0]).toBe('portal_session=');
    expect(Date.parse(cleared.get('expires')!)).toBeLessThan(Date.now());
    expect(cleared.has('httponly')).toBe(true);
    expect(cleared.get('samesite')).toBe('Lax');
    expect(cleared.get('path')).toBe('/');
  });

  it('is not Secure when a client merely claims HTTPS and no proxy is trusted', async () => {
    const { login } = await loginAndLogout(plain.url, { 'x-forwarded-proto': 'https' });
    expect(attributes(login).has('secure')).toBe(false);
  });

  it('is Secure, on login and logout, when a trusted proxy says the browser came over HTTPS', async () => {
    const { login, logout } = await loginAndLogout(proxied.url, { 'x-forwarded-proto': 'https' });
    expect(attributes(login).has('secure')).toBe(true);
    expect(attributes(logout).has('secure')).toBe(true);
    expect(attributes((await loginAndLogout(proxied.url)).login).has('secure')).toBe(false);
  });

  it('is always Secure with COOKIE_SECURE=true', async () => {
    const { login, logout } = await loginAndLogout(forcedSecure.url);
    expect(attributes(login).has('secure')).toBe(true);
    expect(attributes(login).has('httponly')).toBe(true);
    expect(attributes(logout).has('secure')).toBe(true);
  });
});
