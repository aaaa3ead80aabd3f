import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { get } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { brotliCompressSync, brotliDecompressSync, gunzipSync, gzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildOpenApiDocument } from '@portal/contracts/openapi';
import { newParticipant } from '../support/accounts.js';
import { ApiClient } from '../support/api-client.js';
import { startTestPortal, type TestPortal } from '../support/portal.js';

let portal: TestPortal;
let webDist: string;
const APP_JS = `export const words = ${JSON.stringify('evidence '.repeat(400))};\n`;

/** A GET with exactly these request headers, the body as sent (fetch would decompress it). */
function rawGet(
  url: string,
  headers: Record<string, string>,
): Promise<{ status: number; headers: Record<string, string | string[] | undefined>; body: Buffer }> {
  return new Promise((resolve, reject) => {
    get(url, { headers }, (response) => {
      const chunks: Buffer[] = [];
      response.on('data', (chunk: Buffer) => chunks.push(chunk));
      response.on('end', () => resolve({ status: response.statusCode ?? 0, headers: response.headers, body: Buffer.concat(chunks) }));
      response.on('error', reject);
    }).on('error', reject);
  });
}
beforeAll(async () => {
  // A stand-in for the built app, so that these tests do not depend on a web build.
  webDist = mkdtempSync(join(tmpdir(), 'portal-web-'));
  mkdirSync(join(webDist, 'assets'));
  writeFileSync(join(webDist, 'index.html'), '<!doctype html><title>app</title><div id="root"></div>');
  writeFileSync(join(webDist, 'assets', 'index-abc123.js'), 'console.log("app")');
  // The build writes compressed twins of its text files (web/vite.config.ts); so does this one.
  writeFileSync(join(webDist, 'assets', 'app-def456.js'), APP_JS);
  writeFileSync(join(webDist, 'assets', 'app-def456.js.gz'), gzipSync(APP_JS));
  writeFileSync(join(webDist, 'assets', 'app-def456.js.br'), brotliCompressSync(APP_JS));
  writeFileSync(join(webDist, 'index.html.gz'), gzipSync(readFileSync(join(webDist, 'index.html'))));
  // The build's copies of index.html that also preload a route's page (web/build/route-preloads.ts).
  mkdirSync(join(webDist, 'route-html'));
  for (const [file, page] of [
    ['root.html', 'HomePage'],
    ['home.html', 'HomePage'],
    ['Evidence.html', 'EvidencePage'],
  ] as const) {
    const html = `<!doctype html><title>app</title><link rel="modulepreload" href="/assets/${page}-1.js"><div id="root"></div>`;
    writeFileSync(join(webDist, 'route-html', file), html);
    writeFileSync(join(webDist, 'route-html', `${file}.br`), brotliCompressSync(html));
    writeFileSync(join(webDist, 'route-html', `${file}.gz`), gzipSync(html));
  }
  writeFileSync(join(webDist, 'favicon.svg'), '<svg xmlns="http://www.w3.org/2000/svg"/>');
  const SW = `self.addEventListener('install', () => self.skipWaiting()); // ${'precache '.repeat(100)}`;
  writeFileSync(join(webDist, 'sw.js'), SW);
  writeFileSync(join(webDist, 'sw.js.br'), brotliCompressSync(SW));
  portal = await startTestPortal({
    WEB_DIST: webDist,
    PRODUCT_NAME: 'Night Watch',
    STREET_CORNER: 'Elm and 5th',
    ONBOARDING_VIDEO_URL: 'https://videos.example.net/intro.mp4',
  });
});
afterAll(async () => {
  await portal.dispose();
  rmSync(webDist, { recursive: true, force: true });
});

describe('the web app', () => {
  it('answers every client route with the app, never cached, with a CSP that allows only our scripts', async () => {
    for (const path of ['/', '/home', '/login', '/Evidence', '/reset-password-page']) {
      const response = await fetch(`${portal.url}${path}`);
      expect(response.status, path).toBe(200);
      expect(await response.text()).toContain('<div id="root">');
      expect(response.headers.get('cache-control')).toBe('no-cache');
      const csp = response.headers.get('content-security-policy')!;
      expect(csp).toContain("script-src 'self'");
      expect(csp).toContain("frame-ancestors 'none'");
      expect(csp).toContain('media-src');
      expect(csp).toContain('https://videos.example.net');
      expect(response.headers.get('x-content-type-options')).toBe('nosniff');
      expect(response.headers.get('x-request-id')).toMatch(/[0-9a-f-]{36}/);
    }
  });

  it("answers a client route with the build's copy of the app that preloads its page, when the build has one", async () => {
    for (const [path, page] of [
      ['/', 'HomePage'],
      ['/home', 'HomePage'],
      ['/Evidence', 'EvidencePage'],
    ] as const) {
      const response = await rawGet(`${portal.url}${path}`, { 'accept-encoding': 'br' });
      expect(response.status, path).toBe(200);
      expect(response.headers['content-encoding'], path).toBe('br');
      expect(response.headers['cache-control'], path).toBe('no-cache');
      expect(brotliDecompressSync(response.body).toString(), path).toContain(`href="/assets/${page}-1.js"`);
    }
    // A route without its own copy (and any unknown page) gets index.html itself.
    for (const [path, status] of [
      ['/login', 200],
      ['/evidence', 200],
      ['/no/such/page', 404],
    ] as const) {
      const response = await fetch(`${portal.url}${path}`);
      expect(response.status, path).toBe(status);
      expect(await response.text(), path).not.toContain('modulepreload');
    }
  });

  it('answers an unknown page with the app and a 404 status (the app shows its 404 page)', async () => {
    const response = await fetch(`${portal.url}/no/such/page`);
    expect(response.status).toBe(404);
    expect(await response.text()).toContain('<div id="root">');
  });

  it('caches hashed assets for a year and other files briefly', async () => {
    const asset = await fetch(`${portal.url}/assets/index-abc123.js`);
    expect(asset.status).toBe(200);
    expect(asset.headers.get('cache-control')).toBe('public, max-age=31536000, immutable');
    const icon = await fetch(`${portal.url}/favicon.svg`);
    expect(icon.headers.get('cache-control')).toBe('no-cache');
    expect((await fetch(`${portal.url}/assets/missing-123.js`)).status).toBe(404);
  });

  it('never lets the service worker be cached for long, in any encoding', async () => {
    for (const encoding of ['br', 'identity']) {
      const sw = await rawGet(`${portal.url}/sw.js`, { 'accept-encoding': encoding });
      expect(sw.status).toBe(200);
      expect(sw.headers['content-encoding'] ?? 'identity').toBe(encoding);
      expect(sw.headers['cache-control']).toBe('no-cache, max-age=0, must-revalidate');
    }
  });

  it('serves the web app manifest, named after the product', async () => {
    const response = await fetch(`${portal.url}/manifest.webmanifest`);
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toContain('application/manifest+json');
    expect(response.headers.get('cache-control')).toBe('no-cache');
    const manifest = (await response.json()) as { name: string; display: string; icons: { sizes: string; purpose: string }[] };
    expect(manifest).toMatchObject({
      name: 'Night Watch',
      short_name: 'Night Watch',
      display: 'standalone',
      theme_color: '#1f3a5f',
      start_url: '/home',
    });
    expect(manifest.icons.map((icon) => `${icon.sizes} ${icon.purpose}`)).toEqual([
      '192x192 any',
      '512x512 any',
      '192x192 maskable',
      '512x512 maskable',
    ]);
  });

  it('sends the precompressed copy a browser accepts (brotli, else gzip), the plain file otherwise', async () => {
    const url = `${portal.url}/assets/app-def456.js`;
    const brotli = await rawGet(url, { 'accept-encoding': 'gzip, deflate, br' });
    expect(brotli.status).toBe(200);
    expect(brotli.headers['content-encoding']).toBe('br');
    expect(brotliDecompressSync(brotli.body).toString()).toBe(APP_JS);
    const gzip = await rawGet(url, { 'accept-encoding': 'gzip, deflate' });
    expect(gzip.headers['content-encoding']).toBe('gzip');
    expect(gunzipSync(gzip.body).toString()).toBe(APP_JS);
    const plain = await rawGet(url, {});
    expect(plain.headers['content-encoding']).toBeUndefined();
    expect(plain.body.toString()).toBe(APP_JS);
    for (const response of [brotli, gzip, plain]) {
      expect(response.headers['content-type']).toMatch(/javascript/);
      expect(response.headers['cache-control']).toBe('public, max-age=31536000, immutable');
      expect(String(response.headers.vary)).toMatch(/accept-encoding/i);
    }
    expect(brotli.body.length).toBeLessThan(APP_JS.length / 10);
    // A file without compressed twins is sent as it is, whatever the browser accepts.
    const lone = await rawGet(`${portal.url}/assets/index-abc123.js`, { 'accept-encoding': 'gzip, br' });
    expect(lone.headers['content-encoding']).toBeUndefined();
    expect(lone.body.toString()).toBe('console.log("app")');
    // The app's page, for every client route, the same way.
    for (const path of ['/', '/home', '/no/such/page']) {
      const page = await rawGet(`${portal.url}${path}`, { 'accept-encoding': 'gzip' });
      expect(page.headers['content-encoding'], path).toBe('gzip');
      expect(gunzipSync(page.body).toString()).toContain('<div id="root">');
      expect(String(page.headers.vary)).toMatch(/accept-encoding/i);
      expect(page.headers['cache-control']).toBe('no-cache');
    }
  });
});

describe('the API surface', () => {
  it('serves the event configuration', async () => {
    const config = await new ApiClient(portal.url).get('/api/config');
    expect(config.status).toBe(200);
    expect(config.data).toMatchObject({
      productName: 'Night Watch',
      streetCorner: 'Elm and 5th',
      onboardingVideo: { url: 'https://videos.example.net/intro.mp4' },
    });
  });

  it('answers unknown API paths with a JSON 404, and never exposes internal routes', async () => {
    const unknown = await new ApiClient(portal.url).get('/api/nothing/here');
    expect(unknown.status).toBe(404);
    expect(unknown.data).toEqual({ code: 'not_found', message: 'Not found' });
    const internal = await new ApiClient(portal.url).request('POST', '/internal/sessions/resolve', { json: { sessionId: 'x'.repeat(43) } });
    expect(internal.status).toBe(404);
    const viaApi = await new ApiClient(portal.url).request('POST', '/api/user/../../internal/sessions/resolve', {
      json: { sessionId: 'x'.repeat(43) },
    });
    expect(viaApi.status).toBe(404);
  });

  it('serves the OpenAPI document, identical to the committed docs/openapi.json', async () => {
    const served = await new ApiClient(portal.url).get('/api/openapi.json');
    expect(served.status).toBe(200);
    const generated = JSON.parse(JSON.stringify(buildOpenApiDocument()));
    expect(served.data).toEqual(generated);
    const committed = JSON.parse(readFileSync(new URL('../../docs/openapi.json', import.meta.url), 'utf8'));
    expect(committed, 'docs/openapi.json is stale: run npm run build && npm run openapi').toEqual(generated);
    for (const path of ['/api/user/register', '/api/user/login', '/api/user/users', '/api/user/admin/{id}', '/api/evidence/user']) {
      expect(generated.paths).toHaveProperty([path]);
    }
  });

  it('answers a JSON body over 64 KB with a 413 that its operation documents, on every operation that takes one, signed in or not', async () => {
    // Found by the API fuzzer: a participant's 80 KB PUT /api/evidence/{id}/faces was answered 413
    // (the gateway's body limit comes before the role check), a status the document did not name.
    type Operation = { requestBody?: { content?: Record<string, unknown> }; responses: Record<string, unknown> };
    const document = buildOpenApiDocument() as unknown as { paths: Record<string, Record<string, Operation>> };
    const participant = await newParticipant(portal.url);
    const oversized = { pad: 'x'.repeat(70 * 1024) };
    const answered: string[] = [];
    for (const [path, operations] of Object.entries(document.paths)) {
      for (const [method, operation] of Object.entries(operations)) {
        if (!operation.requestBody?.content?.['application/json']) continue;
        const url = path.replace(/\{[^}]+\}/g, '6f1c2a4e-0b7d-4c1e-9a51-3d2f7e8b9c10');
        for (const [who, client] of [
          ['no session', new ApiClient(portal.url)],
          ['a participant', participant.client],
        ] as const) {
          const { status } = await client.request(method.toUpperCase(), url, { json: oversized });
          answered.push(`${method.toUpperCase()} ${path} (${who}): ${status}${status in operation.responses ? '' : ' (not documented)'}`);
        }
      }
    }
    expect(answered.length).toBeGreaterThan(20);
    expect(answered.filter((line) => !line.endsWith(': 413'))).toEqual([]);
  }, 60_000);

  it('answers health and readiness', async () => {
    expect((await fetch(`${portal.url}/healthz`)).status).toBe(200);
    const ready = await fetch(`${portal.url}/readyz`);
    expect(ready.status).toBe(200);
    expect(await ready.json()).toMatchObject({ status: 'ready' });
  });

  it('limits the request rate per address with a 429 and a readable message', async () => {
    const limited = await startTestPortal({ WEB_DIST: webDist, RATE_LIMIT_PER_MINUTE: '5' });
    try {
      const api = new ApiClient(limited.url);
      const statuses: number[] = [];
      for (let i = 0; i < 7; i++) statuses.push((await api.get('/api/config')).status);
      expect(statuses.slice(0, 5)).toEqual([200, 200, 200, 200, 200]);
      const refused = await api.get('/api/config');
      expect(refused.status).toBe(429);
      expect(refused.data).toEqual({ code: 'rate_limited', message: 'Too many requests. Please wait a moment and try again.' });
      // The web app itself is not rate limited.
      expect((await fetch(`${limited.url}/home`)).status).toBe(200);
    } finally {
      await limited.dispose();
    }
  });
});
