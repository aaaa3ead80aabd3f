import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MESSAGES } from '@portal/contracts';
import { buildOpenApiDocument } from '@portal/contracts/openapi';
import { createLogger } from '@portal/platform';
import { createGateway, gatewaySettingsFromEnv, type Gateway } from '@portal/gateway';
import { ApiClient } from '../support/api-client.js';
import { startTestIdentity, type TestIdentity } from '../support/identity-service.js';

// The gateway turns a session cookie into a caller once and then answers it from its cache without
// a promise (services/gateway/src/http/plugins/sessions.ts). These tests go through both
// ways (the cache and a question to identity) and the refusals around them, with the identity
// service and the gateway as separate servers, as in the distributed mode.

const SECRET = 'session-resolve-test-secret-long-enough-12345';
const ADMIN = { username: 'resolveadmin', email: 'resolveadmin@example.org', password: 'resolve-admin-pass-1' };

let identity: TestIdentity;
let gateway: Gateway;
let gatewayUrl: string;

beforeAll(async () => {
  identity = await startTestIdentity({
    INTERNAL_SECRET: SECRET,
    ADMIN_USERNAME: ADMIN.username,
    ADMIN_EMAIL: ADMIN.email,
    ADMIN_PASSWORD: ADMIN.password,
  });
  gateway = await createGateway(
    gatewaySettingsFromEnv({
      HOST: '127.0.0.1',
      PORT: '0',
      INTERNAL_SECRET: SECRET,
      IDENTITY_URL: identity.url,
      EVIDENCE_URL: 'http://127.0.0.1:9', // not asked in these tests
      WEB_DIST: identity.dataDir, // no web app: the API only
      RATE_LIMIT_PER_MINUTE: '0',
    }),
    { logger: createLogger({ service: 'gateway', level: 'silent' }), openapi: buildOpenApiDocument() },
  );
  gatewayUrl = await gateway.start();
});

afterAll(async () => {
  await gateway?.stop();
  await identity?.dispose();
});

describe('the gateway resolves session cookies', () => {
  it('answers a signed-in user again and again (from its cache), and nobody once the session has ended', async () => {
    const api = new ApiClient(gatewayUrl);
    expect((await api.post('/api/user/login', { username: ADMIN.username, password: ADMIN.password })).status).toBe(200);
    const cookie = api.cookies.get('portal_session')!;
    for (let i = 0; i < 5; i += 1) {
      const user = await api.get('/api/user');
      expect(user.status).toBe(200);
      expect(user.data.username).toBe(ADMIN.username);
    }
    expect((await api.post('/api/user/logout', {})).status).toBe(200);
    // The same cookie again, after the logout: the gateway asks identity anew, which knows no such session.
    const stale = new ApiClient(gatewayUrl);
    stale.cookies.set('portal_session', cookie);
    expect((await stale.get('/api/user')).status).toBe(401);
    expect((await stale.get('/api/session')).data).toEqual({ user: null });
  });

  it('answers an unknown cookie as a visitor, and refuses a cross-site write before resolving anything', async () => {
    const api = new ApiClient(gatewayUrl);
    api.cookies.set('portal_session', 'no-such-session-0123456789abcdef');
    expect((await api.get('/api/user')).status).toBe(401);
    expect((await api.get('/api/user')).status).toBe(401); // remembered briefly as no session
    const crossSite = await api.request('POST', '/api/user/logout', {
      json: {},
      headers: { origin: 'https://elsewhere.example', 'sec-fetch-site': 'cross-site' },
    });
    expect(crossSite.status).toBe(403);
    expect(crossSite.data).toEqual({ code: 'cross_site_request', message: MESSAGES.crossSite });
  });

  it('says sign-in is not available (503) when identity cannot be asked, and still serves what needs no session', async () => {
    const api = new ApiClient(gatewayUrl);
    expect((await api.post('/api/user/login', { username: ADMIN.username, password: ADMIN.password })).status).toBe(200);
    const cookie = api.cookies.get('portal_session')!;
    await identity.service.stop();
    const fresh = new ApiClient(gatewayUrl);
    fresh.cookies.set('portal_session', `${cookie.slice(0, -4)}AAAA`); // a cookie the gateway has not seen
    const refused = await fresh.get('/api/user');
    expect(refused.status).toBe(503);
    expect(refused.data).toEqual({ code: 'internal', message: 'Sign-in is not available right now. Please try again shortly.' });
    const config = await new ApiClient(gatewayUrl).get('/api/config');
    expect(config.status).toBe(200);
  });
});
