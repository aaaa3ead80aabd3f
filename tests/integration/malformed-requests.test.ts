import { request } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { adminClient, newParticipant } from '../support/accounts.js';
import { ApiClient } from '../support/api-client.js';
import { startTestPortal, type TestPortal } from '../support/portal.js';

// Requests the API fuzzer (tests/fuzz) found answered with a 5xx, in plain text, or with a status
// the OpenAPI document did not list. Each must be a 4xx JSON error { code, message }.

let portal: TestPortal;
let participant: ApiClient;
let admin: ApiClient;
beforeAll(async () => {
  portal = await startTestPortal();
  participant = (await newParticipant(portal.url)).client;
  admin = (await adminClient(portal.url)).client;
}, 60_000);
afterAll(async () => {
  await portal?.dispose();
});

function expectJsonError(response: { status: number; headers: Headers; data: unknown }, status: number) {
  expect(response.status).toBe(status);
  expect(response.headers.get('content-type')).toMatch(/^application\/json/);
  expect(response.data).toEqual(expect.objectContaining({ code: expect.any(String), message: expect.any(String) }));
}

describe('a multipart Content-Type without a boundary', () => {
  const routes = [
    ['POST', '/api/user/register', () => new ApiClient(portal.url)],
    ['PUT', '/api/evidence/user', () => participant],
    ['POST', '/api/evidence', () => participant],
    ['PUT', '/api/evidence/update/00000000-0000-4000-8000-000000000000', () => participant],
  ] as const;
  for (const [method, path, client] of routes) {
    it(`${method} ${path} is a 400 that says so`, async () => {
      const response = await client().request(method, path, { headers: { 'content-type': 'multipart/form-data' } });
      expectJsonError(response, 400);
      expect(response.data.message).toBe('The form could not be read: its Content-Type names no multipart boundary');
    });
  }
});

describe('resumable upload requests that break the tus protocol', () => {
  it('without Tus-Resumable: 412 with a JSON error', async () => {
    const response = await participant.request('POST', '/api/evidence/uploads', { headers: { 'upload-length': '10' } });
    expectJsonError(response, 412);
    expect(response.data.message).toBe('Resumable uploads need the header Tus-Resumable: 1.0.0');
    expect(response.headers.get('tus-version')).toBe('1.0.0');
  });

  it('with a malformed Upload-Length or Upload-Metadata: 400 naming the headers', async () => {
    const response = await participant.request('POST', '/api/evidence/uploads', {
      headers: { 'tus-resumable': '1.0.0', 'upload-length': '-1', 'upload-metadata': 'title a b' },
    });
    expectJsonError(response, 400);
    expect(response.data.message).toMatch(/invalid header: .*upload-length/);
    expect(response.data.message).toMatch(/upload-metadata/);
  });

  it('a PATCH without Upload-Offset: 400, not the 403 of an upload that is not yours', async () => {
    const response = await participant.request('PATCH', '/api/evidence/uploads/0', {
      headers: { 'tus-resumable': '1.0.0', 'content-type': 'application/offset+octet-stream' },
    });
    expectJsonError(response, 400);
  });

  it('an error from a hook (no title) is JSON and says so', async () => {
    const response = await participant.request('POST', '/api/evidence/uploads', {
      headers: { 'tus-resumable': '1.0.0', 'upload-length': '8', 'upload-metadata': 'notes ' },
    });
    expectJsonError(response, 400);
  });

  it('a HEAD without a session: 401', async () => {
    const response = await new ApiClient(portal.url).request('HEAD', '/api/evidence/uploads/0', { headers: { 'tus-resumable': '1.0.0' } });
    expect(response.status).toBe(401);
    expect(response.headers.get('content-type')).toMatch(/^application\/json/);
  });
});

it("a participant's evidence under an id that is no user id: 404", async () => {
  const response = await admin.get('/api/user/not-a-user/evidence');
  expectJsonError(response, 404);
});

describe('a visitor sending a file where a session is needed', () => {
  /** Starts a large multipart upload, sends only its first bytes, and waits for the answer. */
  function partialUpload(method: string, path: string, declared: number): Promise<{ status: number; body: string }> {
    const boundary = 'visitor-boundary';
    const head = `--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="big.bin"\r\nContent-Type: application/octet-stream\r\n\r\n`;
    return new Promise((resolve, reject) => {
      const req = request(new URL(path, portal.url), {
        method,
        headers: { 'content-type': `multipart/form-data; boundary=${boundary}`, 'content-length': String(declared) },
      });
      req.on('response', (res) => {
        let body = '';
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => (body += chunk));
        res.on('end', () => {
          req.destroy();
          resolve({ status: res.statusCode ?? 0, body });
        });
      });
      req.on('error', reject);
      // The rest of the body never comes: the answer must not wait for it.
      req.write(head + 'x'.repeat(1024));
    });
  }

  // Each declared length is within the route's limit (a larger one is a 413 at the gateway: upload-limits.test.ts).
  for (const [method, path, declared] of [
    ['POST', '/api/evidence', 200 * 1024 * 1024],
    ['PUT', '/api/evidence/update/00000000-0000-4000-8000-000000000000', 200 * 1024 * 1024],
    ['PUT', '/api/evidence/user', 10 * 1024 * 1024],
  ] as const) {
    it(`${method} ${path} is refused with a 401 before the body is read`, async () => {
      const response = await partialUpload(method, path, declared);
      expect(response.status).toBe(401);
      expect(JSON.parse(response.body)).toEqual(expect.objectContaining({ code: 'unauthenticated' }));
    });
  }
});
