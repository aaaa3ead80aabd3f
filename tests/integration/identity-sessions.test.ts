import { SignJWT } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MESSAGES } from '@portal/contracts';
import { IDENTITY_HEADER } from '@portal/platform';
import { waitFor } from '@portal/platform/testing';
import { ApiClient } from '../support/api-client.js';
import { newParticipant, publishedEvents } from '../support/accounts.js';
import { startTestPortal, type TestPortal } from '../support/portal.js';

let portal: TestPortal;
beforeAll(async () => {
  portal = await startTestPortal();
});
afterAll(() => portal.dispose());

describe('login', () => {
  it('logs in by username or by e-mail and sets a hardened session cookie', async () => {
    const { user, password } = await newParticipant(portal.url, { username: 'login_both', email: 'login_both@example.org' });
    for (const login of ['login_both', 'LOGIN_BOTH@example.org']) {
      const api = new ApiClient(portal.url);
      const response = await api.post('/api/user/login', { username: login, password });
      expect(response.status).toBe(200);
      expect(response.data.id).toBe(user.id);
      const cookie = response.headers.getSetCookie().find((line) => line.startsWith('portal_session='))!;
      expect(cookie).toMatch(/HttpOnly/);
      expect(cookie).toMatch(/SameSite=Lax/);
      expect(cookie).toMatch(/Path=\//);
      expect(cookie).not.toMatch(/Secure/); // plain HTTP here; behind HTTPS the cookie is Secure
      expect((await api.get('/api/user')).data.id).toBe(user.id);
    }
  });

  it('marks the cookie Secure when the portal is reached over HTTPS through a trusted proxy', async () => {
    const behindTls = await startTestPortal({ TRUST_PROXY: 'true' });
    try {
      const response = await new ApiClient(behindTls.url).request('POST', '/api/user/login', {
        json: { username: 'overseer', password: 'overseer-pass-1' },
        headers: { 'x-forwarded-proto': 'https' },
      });
      expect(response.status).toBe(200);
      expect(response.headers.getSetCookie().join()).toMatch(/; Secure/);
    } finally {
      await behindTls.dispose();
    }
  });

  it('answers the three spec messages: missing input, mismatch, unknown account', async () => {
    const api = new ApiClient(portal.url);
    const missing = await api.post('/api/user/login', { username: 'someone' });
    expect(missing.status).toBe(400);
    expect(missing.data.message).toBe(MESSAGES.loginInput);
    const { user } = await newParticipant(portal.url);
    const wrong = await api.post('/api/user/login', { username: user.username, password: 'wrong-password' });
    expect(wrong.status).toBe(401);
    expect(wrong.data).toEqual({ code: 'invalid_credentials', message: MESSAGES.loginMismatch });
    const unknown = await api.post('/api/user/login', { username: 'nobody_at_all', password: 'whatever1' });
    expect(unknown.status).toBe(401);
    expect(unknown.data.message).toBe(MESSAGES.loginMismatch);
    expect(api.cookies.size).toBe(0);
  });

  it('gives a new session id at every login and ends the session it replaces', async () => {
    const { client, user, password } = await newParticipant(portal.url);
    const before = client.cookies.get('portal_session')!;
    expect((await client.post('/api/user/login', { username: user.username, password })).status).toBe(200);
    const after = client.cookies.get('portal_session')!;
    expect(after).not.toBe(before);
    const stale = new ApiClient(portal.url);
    stale.cookies.set('portal_session', before);
    expect((await stale.get('/api/user')).status).toBe(401);
  });
});

describe('the signed-in user', () => {
  it('is a 401 with a JSON body without a session', async () => {
    const response = await new ApiClient(portal.url).get('/api/user');
    expect(response.status).toBe(401);
    expect(response.data).toEqual({ code: 'unauthenticated', message: MESSAGES.notSignedIn });
  });

  it('ignores identity headers a client forges, signed or not', async () => {
    const { user } = await newParticipant(portal.url);
    const forged = await new SignJWT({ role: 2, username: 'evil', sid: 'x' })
      .setProtectedHeader({ alg: 'HS256' })
      .setSubject(user.id)
      .setIssuer('portal-gateway')
      .setAudience('portal-services')
      .setExpirationTime('1m')
      .sign(new TextEncoder().encode('a-guessed-secret-that-is-long-enough-000'));
    for (const value of [forged, JSON.stringify({ userId: user.id, role: 2 })]) {
      const response = await new ApiClient(portal.url).get('/api/user', { [IDENTITY_HEADER]: value });
      expect(response.status).toBe(401);
    }
    const admin = await new ApiClient(portal.url).get('/api/user/users', { [IDENTITY_HEADER]: forged });
    expect(admin.status).toBe(401);
  });

  it('ends with logout: the old cookie opens nothing afterwards', async () => {
    const { client } = await newParticipant(portal.url);
    const cookie = client.cookies.get('portal_session')!;
    expect((await client.get('/api/user')).status).toBe(200);
    const logout = await client.post('/api/user/logout');
    expect(logout.status).toBe(200);
    expect(client.cookies.has('portal_session')).toBe(false);
    const replay = new ApiClient(portal.url);
    replay.cookies.set('portal_session', cookie);
    expect((await replay.get('/api/user')).status).toBe(401);
    // Logging out twice, or without a session, is harmless.
    expect((await new ApiClient(portal.url).post('/api/user/logout')).status).toBe(200);
  });

  it('survives a restart of the portal (sessions and accounts are on disk)', async () => {
    const durable = await startTestPortal();
    const { client, user } = await newParticipant(durable.url);
    const cookie = client.cookies.get('portal_session')!;
    await durable.stop();
    const again = await startTestPortal({}, durable.dataDir);
    try {
      const api = new ApiClient(again.url);
      api.cookies.set('portal_session', cookie);
      const me = await api.get('/api/user');
      expect(me.status).toBe(200);
      expect(me.data.id).toBe(user.id);
    } finally {
      await again.dispose();
      await durable.dispose();
    }
  });
});

describe('refusing cross-site writes', () => {
  it('refuses a state change whose Origin is another site', async () => {
    const { client } = await newParticipant(portal.url);
    const response = await client.request('POST', '/api/user/logout', { headers: { origin: 'https://evil.example' } });
    expect(response.status).toBe(403);
    expect(response.data).toEqual({ code: 'cross_site_request', message: MESSAGES.crossSite });
    expect((await client.get('/api/user')).status).toBe(200);
  });

  it('allows the same origin', async () => {
    const { client } = await newParticipant(portal.url);
    const response = await client.request('POST', '/api/user/logout', { headers: { origin: portal.url } });
    expect(response.status).toBe(200);
  });
});

describe('onboarding video flag', () => {
  it('is set by its owner, refused for someone else, allowed to an administrator', async () => {
    const alice = await newParticipant(portal.url, {}, undefined, { watched: false });
    const bob = await newParticipant(portal.url, {}, undefined, { watched: false });
    expect((await alice.client.put(`/api/user/watched/${alice.user.id}`)).data.video_watched).toBe(true);
    const refused = await alice.client.put(`/api/user/watched/${bob.user.id}`);
    expect(refused.status).toBe(403);
    expect(refused.data.message).toBe(MESSAGES.notYours);
    expect((await new ApiClient(portal.url).put(`/api/user/watched/${bob.user.id}`)).status).toBe(401);
    const admin = new ApiClient(portal.url);
    await admin.post('/api/user/login', { username: 'overseer', password: 'overseer-pass-1' });
    expect((await admin.put(`/api/user/watched/${bob.user.id}`)).data.video_watched).toBe(true);
    await waitFor(() => publishedEvents(portal.dataDir).some((e) => e.value.type === 'user.video-watched' && e.key === alice.user.id), {
      what: 'user.video-watched',
    });
  });
});
