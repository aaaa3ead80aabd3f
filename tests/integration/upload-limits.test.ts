import { readdirSync } from 'node:fs';
import { request } from 'node:http';
import { connect, type Socket } from 'node:net';
import { join } from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { waitFor } from '@portal/platform/testing';
import { newParticipant } from '../support/accounts.js';
import { freePort } from '../support/free-port.js';
import { ApiClient } from '../support/api-client.js';
import { NO_FACE_CHECK, startTestPortal, type TestPortal } from '../support/portal.js';
import { rawRequest, type RawAnswer } from '../support/raw-http.js';

// A body larger than any upload may be is refused before it is read; a body that stops coming
// ends; one participant cannot hold more than a few uploads open or reserve the disk with
// unfinished resumable uploads. Limits are small here to keep the test fast.

const IDLE_MS = 700;
const QUOTA = 3 * 1024 * 1024;
let portal: TestPortal;
let participant: ApiClient;
let identityPort: number;

beforeAll(async () => {
  identityPort = await freePort();
  portal = await startTestPortal({
    ...NO_FACE_CHECK,
    IDENTITY_PORT: String(identityPort),
    EVIDENCE_IMAGE_MAX_BYTES: '1mb',
    EVIDENCE_VIDEO_MAX_BYTES: '2mb',
    EVIDENCE_AUDIO_MAX_BYTES: '1mb',
    PHOTO_MAX_BYTES: '512kb',
    UPLOAD_IDLE_TIMEOUT_MS: String(IDLE_MS),
    UPLOAD_CONCURRENT_PER_PARTICIPANT: '2',
    UPLOAD_UNFINISHED_BYTES_PER_PARTICIPANT: String(QUOTA),
  });
  participant = (await newParticipant(portal.url)).client;
}, 60_000);
afterAll(async () => {
  await portal?.dispose();
});

const TUS = { 'tus-resumable': '1.0.0' };
const cookieOf = (client: ApiClient) => [...client.cookies].map(([name, value]) => `${name}=${value}`).join('; ');
const MULTIPART_HEAD = (boundary: string) =>
  `--${boundary}\r\nContent-Disposition: form-data; name="title"\r\n\r\nStalled\r\n--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="big.jpg"\r\nContent-Type: image/jpeg\r\n\r\n`;

function createUpload(client: ApiClient, length: number) {
  return client.request('POST', '/api/evidence/uploads', {
    headers: { ...TUS, 'upload-length': String(length), 'upload-metadata': `title ${Buffer.from('Quota').toString('base64')}` },
  });
}

/** Every upload route, as its client sends it, with what a signed-in or anonymous client needs. */
async function uploadRoutes(): Promise<{ name: string; method: string; path: string; headers: Record<string, string> }[]> {
  const created = await createUpload(participant, 1000);
  expect(created.status, created.text).toBe(201);
  const multipart = { 'content-type': 'multipart/form-data; boundary=b' };
  const session = { cookie: cookieOf(participant) };
  return [
    { name: 'multipart evidence', method: 'POST', path: '/api/evidence', headers: { ...multipart, ...session } },
    {
      name: 'evidence replacement',
      method: 'PUT',
      path: '/api/evidence/update/00000000-0000-4000-8000-000000000000',
      headers: { ...multipart, ...session },
    },
    {
      name: 'resumable chunk',
      method: 'PATCH',
      path: created.headers.get('location')!,
      headers: { ...TUS, 'upload-offset': '0', 'content-type': 'application/offset+octet-stream', ...session },
    },
    { name: 'registration photo', method: 'POST', path: '/api/user/register', headers: multipart },
    { name: 'avatar', method: 'PUT', path: '/api/evidence/user', headers: { ...multipart, ...session } },
  ];
}

function expectJsonError(answer: RawAnswer, status: number, message: RegExp) {
  expect(answer.status, answer.body).toBe(status);
  expect(answer.headers['content-type']).toMatch(/^application\/json/);
  expect(JSON.parse(answer.body).message).toMatch(message);
}

describe('a declared length above the route’s limit', () => {
  it('is refused with 413 before the body is read, on every upload route, with or without Expect', async () => {
    for (const route of await uploadRoutes()) {
      for (const expect100 of [false, true]) {
        const what = `${route.name}${expect100 ? ' (Expect: 100-continue)' : ''}`;
        const answer = await rawRequest(new URL(route.path, portal.url).href, {
          method: route.method,
          headers: { ...route.headers, 'content-length': '4000000000', ...(expect100 ? { expect: '100-continue' } : {}) },
          ...(expect100 ? {} : { partial: 'a few bytes' }),
        });
        expect(answer.status, `${what}: ${answer.body}`).toBe(413);
        expect(JSON.parse(answer.body), what).toEqual({
          code: 'payload_too_large',
          message: expect.stringMatching(/too large \(at most \d/),
        });
        expect(answer.continued, what).toBe(false);
        expect(answer.headers.connection, what).toBe('close');
        expect(answer.ms, what).toBeLessThan(5000);
      }
    }
  });

  it('is refused by the service itself too, for whatever reaches it without the gateway', async () => {
    const answer = await rawRequest(`http://127.0.0.1:${identityPort}/api/user/register`, {
      method: 'POST',
      headers: { 'content-type': 'multipart/form-data; boundary=b', 'content-length': '4000000000' },
      partial: 'a few bytes',
    });
    expect(answer.status, answer.body).toBe(413);
    expect(JSON.parse(answer.body).message).toBe('The photo is too large (at most 512 KB)');
    expect(answer.headers.connection).toBe('close');
  });
});

describe('a body that stops coming', () => {
  /** Sends the headers and the first bytes of a body declared 300 KB, then nothing more. */
  function stalled(method: string, path: string, headers: Record<string, string>, first: string | Buffer) {
    return rawRequest(new URL(path, portal.url).href, {
      method,
      headers: { ...headers, 'content-length': String(300 * 1024) },
      partial: first,
    });
  }

  it('ends with 408 after the idle time, and the part of a multipart file that came is removed', async () => {
    const boundary = 'stall-boundary';
    const started = Date.now();
    const evidence = await stalled(
      'POST',
      '/api/evidence',
      { cookie: cookieOf(participant), 'content-type': `multipart/form-data; boundary=${boundary}` },
      MULTIPART_HEAD(boundary) + 'x'.repeat(64 * 1024),
    );
    expectJsonError(evidence, 408, /stopped arriving/);
    expect(Date.now() - started).toBeGreaterThanOrEqual(IDLE_MS - 50);
    expect(evidence.headers.connection).toBe('close');
    const registration = await stalled(
      'POST',
      '/api/user/register',
      { 'content-type': `multipart/form-data; boundary=${boundary}` },
      MULTIPART_HEAD(boundary).replace('name="file"', 'name="verification_photo"') + 'x'.repeat(64 * 1024),
    );
    expectJsonError(registration, 408, /stopped arriving/);
    for (const dir of ['evidence-uploads', 'identity-uploads']) {
      await waitFor(() => readdirSync(join(portal.dataDir, 'tmp', dir)).length === 0 || null, {
        timeoutMs: 5000,
        intervalMs: 50,
        what: `an empty tmp/${dir}`,
      });
    }
  });

  it('ends a stalled resumable chunk with 408; the bytes that came stay, so the upload resumes from there', async () => {
    const created = await createUpload(participant, 300 * 1024);
    const location = created.headers.get('location')!;
    const answer = await stalled(
      'PATCH',
      location,
      { ...TUS, 'upload-offset': '0', 'content-type': 'application/offset+octet-stream', cookie: cookieOf(participant) },
      Buffer.alloc(100 * 1024, 1),
    );
    expectJsonError(answer, 408, /stopped arriving/);
    const head = await participant.request('HEAD', location, { headers: TUS });
    expect(head.status).toBe(200);
    expect(Number(head.headers.get('upload-offset'))).toBe(100 * 1024);
    expect((await participant.request('DELETE', location, { headers: TUS })).status).toBe(204);
  });

  it('does not end a slow body that keeps coming', async () => {
    const created = await createUpload(participant, 6 * 1024);
    const answer = await new Promise<number>((resolve, reject) => {
      const req = request(new URL(created.headers.get('location')!, portal.url), {
        method: 'PATCH',
        headers: {
          ...TUS,
          'upload-offset': '0',
          'content-type': 'application/offset+octet-stream',
          'content-length': String(6 * 1024),
          cookie: cookieOf(participant),
        },
      });
      req.on('response', (res) => {
        res.resume();
        resolve(res.statusCode ?? 0);
      });
      req.on('error', reject);
      void (async () => {
        for (let i = 0; i < 6; i++) {
          req.write(Buffer.alloc(1024, 2));
          await delay(IDLE_MS / 2);
        }
        req.end();
      })();
    });
    // The last chunk completes the upload: tus answers with the item (200) or 415 for these bytes.
    expect(answer).not.toBe(408);
    expect(answer).toBeLessThan(500);
  });
});

describe('one participant’s share of the upload capacity', () => {
  it('at most UPLOAD_CONCURRENT_PER_PARTICIPANT uploads at once; the next is a 429 that says why', async () => {
    const boundary = 'concurrent';
    const open: ReturnType<typeof request>[] = [];
    const answers: Promise<number>[] = [];
    const keepGoing = setInterval(() => open.forEach((req) => req.write('x'.repeat(16))), IDLE_MS / 4);
    try {
      for (let i = 0; i < 2; i++) {
        const req = request(new URL('/api/evidence', portal.url), {
          method: 'POST',
          headers: {
            cookie: cookieOf(participant),
            'content-type': `multipart/form-data; boundary=${boundary}`,
            'content-length': String(200 * 1024),
          },
        });
        answers.push(
          new Promise((resolve) => {
            req.on('response', (res) => {
              res.resume();
              resolve(res.statusCode ?? 0);
            });
            req.on('error', () => resolve(0));
          }),
        );
        req.write(MULTIPART_HEAD(boundary));
        open.push(req);
      }
      await delay(200);
      const third = await participant.request('POST', '/api/evidence', { json: { title: 'a note' } });
      expect(third.status, third.text).toBe(429);
      expect(third.data.message).toMatch(/2 uploads at once/);
      // Someone else is not held up by this participant's uploads.
      const other = (await newParticipant(portal.url)).client;
      expect((await other.post('/api/evidence', { title: 'not held up' })).status).toBe(201);
    } finally {
      // The two uploads stop sending and end as stalled ones do.
      clearInterval(keepGoing);
    }
    expect(await Promise.all(answers)).toEqual([408, 408]);
    open.forEach((req) => req.destroy());
    await waitFor(async () => ((await participant.post('/api/evidence', { title: 'after' })).status === 201 ? true : null), {
      timeoutMs: 5000,
      intervalMs: 100,
      what: 'uploads allowed again',
    });
  });

  it('a resumable upload created with its first bytes (creation-with-upload) counts against the share too', async () => {
    // A hostile participant holds many creation POSTs open at once, each carrying its body slowly,
    // on raw sockets: only the share (2) may stay open, every other one is refused with a 429.
    const someone = (await newParticipant(portal.url)).client;
    const url = new URL(portal.url);
    const ATTEMPTS = 24;
    const LENGTH = 32 * 1024;
    const head = [
      'POST /api/evidence/uploads HTTP/1.1',
      `Host: ${url.host}`,
      `Cookie: ${cookieOf(someone)}`,
      'Tus-Resumable: 1.0.0',
      `Upload-Length: ${LENGTH}`,
      `Upload-Metadata: title ${Buffer.from('Held open').toString('base64')},filename ${Buffer.from('clip.mp4').toString('base64')}`,
      'Content-Type: application/offset+octet-stream',
      `Content-Length: ${LENGTH}`,
    ].join('\r\n');
    const sockets: Socket[] = [];
    const answered = new Map<Socket, number>();
    const keepGoing = setInterval(() => sockets.forEach((socket) => !answered.has(socket) && socket.write('x'.repeat(16))), IDLE_MS / 4);
    try {
      await Promise.all(
        Array.from(
          { length: ATTEMPTS },
          () =>
            new Promise<void>((resolve, reject) => {
              const socket = connect({ host: url.hostname, port: Number(url.port) }, () => {
                socket.write(`${head}\r\n\r\n${'x'.repeat(1024)}`);
                resolve();
              });
              let text = '';
              socket.on('data', (chunk: Buffer) => {
                text += chunk.toString('latin1');
                const status = /^HTTP\/1\.1 (\d{3})/.exec(text);
                if (status && !answered.has(socket)) answered.set(socket, Number(status[1]));
              });
              socket.on('error', () => undefined);
              socket.once('error', reject);
              sockets.push(socket);
            }),
        ),
      );
      await waitFor(async () => (answered.size >= ATTEMPTS - 2 ? true : null), {
        timeoutMs: 5000,
        intervalMs: 50,
        what: 'the creations over the share refused',
      }).catch(() => undefined);
      const statuses = [...answered.values()];
      expect(
        statuses.filter((status) => status === 429),
        `answers: ${statuses.join(', ')}`,
      ).toHaveLength(ATTEMPTS - 2);
      expect(sockets.filter((socket) => !answered.has(socket))).toHaveLength(2);
    } finally {
      clearInterval(keepGoing);
      sockets.forEach((socket) => socket.destroy());
    }
    // Their slots come back once the connections are gone.
    await waitFor(async () => ((await someone.post('/api/evidence', { title: 'after' })).status === 201 ? true : null), {
      timeoutMs: 5000,
      intervalMs: 100,
      what: 'uploads allowed again',
    });
  });

  it('unfinished resumable uploads reserve at most UPLOAD_UNFINISHED_BYTES_PER_PARTICIPANT; the next is a 413 that says so', async () => {
    const someone = (await newParticipant(portal.url)).client;
    const first = await createUpload(someone, 2 * 1024 * 1024);
    expect(first.status, first.text).toBe(201);
    const second = await createUpload(someone, 1024 * 1024);
    expect(second.status, second.text).toBe(201);
    const third = await createUpload(someone, 1024);
    expect(third.status, third.text).toBe(413);
    expect(third.data).toEqual({ code: 'payload_too_large', message: expect.stringMatching(/unfinished uploads/) });
    // Another participant has a quota of their own.
    expect((await createUpload(participant, 1024 * 1024)).status).toBe(201);
    // Cancelling one frees its share.
    expect((await someone.request('DELETE', first.headers.get('location')!, { headers: TUS })).status).toBe(204);
    expect((await createUpload(someone, 1024 * 1024)).status).toBe(201);
  });

  it('holds the unfinished-bytes share when a participant creates many uploads at the same instant', async () => {
    const someone = (await newParticipant(portal.url)).client;
    // Twelve creations of 1 MiB at once against a share of 3 MiB: three fit, whatever the order.
    const answers = await Promise.all(Array.from({ length: 12 }, () => createUpload(someone, 1024 * 1024)));
    const created = answers.filter((answer) => answer.status === 201);
    expect(created).toHaveLength(3);
    for (const answer of answers.filter((one) => one.status !== 201)) {
      expect([413, 429], answer.text).toContain(answer.status);
    }
    expect((await createUpload(someone, 1024)).status).toBe(413);
  });
});
