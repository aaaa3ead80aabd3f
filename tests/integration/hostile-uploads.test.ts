import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MESSAGES } from '@portal/contracts';
import { ApiClient } from '../support/api-client.js';
import { newParticipant } from '../support/accounts.js';
import { waitForMedia, type EvidenceItem } from '../support/evidence.js';
import {
  GIF_SCRIPT,
  ZIP_SIGNATURE,
  firstJsonBody,
  makeHostileFiles,
  multipartBody,
  rawHttp,
  type HostileFiles,
} from '../support/hostile.js';
import { registrationForm } from '../support/media.js';
import { expectNothingLeft, storageFiles } from '../support/storage-scan.js';
import { NO_FACE_CHECK, startTestPortal, type TestPortal } from '../support/portal.js';

// Small limits, so that "too large" costs little to send.
const LIMITS = {
  EVIDENCE_IMAGE_MAX_BYTES: '200kb',
  EVIDENCE_AUDIO_MAX_BYTES: '200kb',
  EVIDENCE_VIDEO_MAX_BYTES: '1mb',
  PHOTO_MAX_BYTES: '200kb',
};

let portal: TestPortal;
let files: HostileFiles;
let participant: ApiClient;
beforeAll(async () => {
  [portal, files] = await Promise.all([startTestPortal({ ...NO_FACE_CHECK, ...LIMITS }), makeHostileFiles()]);
  participant = (await newParticipant(portal.url)).client;
}, 120_000);
afterAll(async () => {
  await portal?.dispose();
});

const cookieOf = (client: ApiClient) => [...client.cookies].map(([name, value]) => `${name}=${value}`).join('; ');
const TUS = { 'tus-resumable': '1.0.0' };
const b64 = (value: string) => Buffer.from(value).toString('base64');

interface Answer {
  status: number;
  data: any;
}

async function answerOf(response: Response): Promise<Answer> {
  const text = await response.text();
  let data: unknown = text;
  try {
    data = text ? JSON.parse(text) : undefined;
  } catch {
    // not JSON: the assertions on `data` say so
  }
  return { status: response.status, data };
}

/** POST /api/evidence with a file part written byte by byte. */
async function postEvidence(bytes: Buffer, filename = 'evidence.jpg', type = 'image/jpeg'): Promise<Answer> {
  const { body, contentType } = multipartBody({ title: 'Hostile' }, { field: 'file', filename, type, bytes });
  return answerOf(
    await fetch(new URL('/api/evidence', portal.url), {
      method: 'POST',
      headers: { 'content-type': contentType, cookie: cookieOf(participant) },
      body: new Uint8Array(body),
    }),
  );
}

/** A whole resumable upload: create it, then send every byte in one PATCH. */
async function tusEvidence(bytes: Buffer, filename = 'evidence.jpg', type = 'image/jpeg'): Promise<Answer> {
  const created = await participant.request('POST', '/api/evidence/uploads', {
    headers: {
      ...TUS,
      'upload-length': String(bytes.length),
      'upload-metadata': `title ${b64('Hostile')},filename ${b64(filename)},filetype ${b64(type)}`,
    },
  });
  if (created.status !== 201) return { status: created.status, data: created.data };
  // An empty upload is complete when it is created: that answer is the outcome.
  if (bytes.length === 0) return { status: created.status, data: created.data };
  return answerOf(
    await fetch(new URL(created.headers.get('location')!, portal.url), {
      method: 'PATCH',
      headers: { ...TUS, 'upload-offset': '0', 'content-type': 'application/offset+octet-stream', cookie: cookieOf(participant) },
      body: new Uint8Array(bytes),
    }),
  );
}

const WAYS = { multipart: postEvidence, resumable: tusEvidence } as const;

/** The files of an item (its blobs and their metadata) are the only ones an accepted upload may leave. */
const itemFiles = (id: string) => (path: string) =>
  path.startsWith(`blobs/data/evidence/${id}/`) || path.startsWith(`blobs/meta/evidence/${id}/`);

async function expectServiceUp(): Promise<void> {
  const list = await participant.get('/api/evidence');
  expect(list.status, 'the evidence service answers right after').toBe(200);
}

/** A refused upload: the status and message, nothing left on disk, the service still answering. */
async function expectRefused(answer: Answer, before: Set<string>, status: number, message: string | RegExp): Promise<void> {
  expect(answer.status).toBe(status);
  expect(answer.data).toMatchObject({
    code: expect.any(String),
    message: typeof message === 'string' ? message : expect.stringMatching(message),
  });
  await expectNothingLeft(portal.dataDir, before);
  await expectServiceUp();
}

/** An accepted upload: an item whose media ends as expected; only that item's files remain. */
async function expectItem(answer: Answer, before: Set<string>, media: 'ready' | 'failed', media_type = 2): Promise<EvidenceItem> {
  expect([200, 201], JSON.stringify(answer.data)).toContain(answer.status);
  const item = await waitForMedia(participant, answer.data.id as string);
  expect(item).toMatchObject({ media_status: media, media_type });
  if (media === 'failed') expect(item.media_error).toMatch(/could not be processed/);
  // The media worker's work folder is emptied too; the item keeps only its blobs.
  await expectNothingLeft(portal.dataDir, before, itemFiles(item.id), `item ${item.id}`);
  await expectServiceUp();
  return item;
}

describe.each(Object.entries(WAYS))('hostile evidence files (%s)', (_way, send) => {
  it('takes a truncated or corrupt JPEG in, and shows it as failed with the reason', async () => {
    for (const bytes of [files.truncatedJpeg, files.corruptJpeg]) {
      const before = storageFiles(portal.dataDir);
      await expectItem(await send(bytes), before, 'failed');
    }
  });

  it('stops a decompression bomb (a header claiming 50000 x 50000 pixels) without decoding it', async () => {
    for (const bytes of [files.pngBomb, files.jpegBomb]) {
      const before = storageFiles(portal.dataDir);
      const started = Date.now();
      const item = await expectItem(await send(bytes, 'bomb.png', 'image/png'), before, 'failed');
      expect(item.aws_url).toBeNull();
      expect(item.media_error).toMatch(/pixel limit/);
      // Decoding 2.5 gigapixels would take minutes and gigabytes; the pixel limit answers at once.
      expect(Date.now() - started).toBeLessThan(20_000);
    }
  });

  it('judges by the bytes: a PNG called clip.mp4 is a photo; text called photo.jpg, HTML and SVG are refused', async () => {
    let before = storageFiles(portal.dataDir);
    await expectItem(await send(files.png, 'clip.mp4', 'video/mp4'), before, 'ready', 2);
    for (const [bytes, name, type] of [
      [files.text, 'photo.jpg', 'image/jpeg'],
      [files.html, 'picture.png', 'image/png'],
      [files.svg, 'picture.png', 'image/png'],
    ] as const) {
      before = storageFiles(portal.dataDir);
      await expectRefused(await send(bytes, name, type), before, 415, MESSAGES.unsupportedEvidenceFile);
    }
  });

  it('refuses an empty file', async () => {
    const before = storageFiles(portal.dataDir);
    await expectRefused(await send(Buffer.alloc(0)), before, 400, MESSAGES.emptyFile);
  });

  it('refuses files over the limit: over the largest of all, and over the limit of their kind', async () => {
    let before = storageFiles(portal.dataDir);
    await expectRefused(
      await send(Buffer.concat([files.goodJpeg, Buffer.alloc(1100 * 1024, 1)])),
      before,
      413,
      /too large \(at most 1 MB\)/,
    );
    before = storageFiles(portal.dataDir);
    await expectRefused(
      await send(Buffer.concat([files.goodJpeg, Buffer.alloc(300 * 1024, 1)])),
      before,
      413,
      'Photos can be at most 200 KB',
    );
  });

  it('keeps a polyglot JPEG+ZIP private as sent, and publishes only a clean re-encoded copy', async () => {
    const before = storageFiles(portal.dataDir);
    const item = await expectItem(await send(files.jpegZip, 'holiday.jpg'), before, 'ready');
    const display = await participant.bytes(item.aws_url!);
    expect(display.headers.get('content-type')).toBe('image/webp');
    expect(display.body.includes(ZIP_SIGNATURE)).toBe(false);
    const original = await participant.bytes(`/media/evidence/${item.id}/original`);
    expect(original.headers.get('content-type')).toBe('image/jpeg');
    expect(original.headers.get('content-disposition')).toBe('attachment');
    expect(original.headers.get('x-content-type-options')).toBe('nosniff');
    expect(Buffer.compare(original.body, files.jpegZip)).toBe(0);
    expect((await new ApiClient(portal.url).bytes(`/media/evidence/${item.id}/original`)).status).toBe(404);
  });

  it('never serves a GIF+JavaScript polyglot as a script', async () => {
    const before = storageFiles(portal.dataDir);
    const answer = await send(files.gifJs, 'funny.gif', 'application/javascript');
    expect([200, 201]).toContain(answer.status);
    const item = await waitForMedia(participant, answer.data.id);
    expect(item.media_type).toBe(2);
    await expectNothingLeft(portal.dataDir, before, itemFiles(item.id));
    const original = await participant.bytes(`/media/evidence/${item.id}/original`);
    expect(original.headers.get('content-type')).toBe('image/gif');
    expect(original.headers.get('x-content-type-options')).toBe('nosniff');
    expect(original.headers.get('content-disposition')).toBe('attachment');
    // It is a valid one-pixel GIF: published only as a WebP made from its pixels.
    expect(item.media_status).toBe('ready');
    const display = await participant.bytes(item.aws_url!);
    expect(display.headers.get('content-type')).toBe('image/webp');
    expect(display.body.includes(Buffer.from(GIF_SCRIPT))).toBe(false);
  });

  it('ignores hostile file names: path traversal, absolute paths, NUL bytes, very long names', async () => {
    for (const name of [
      '../../etc/passwd',
      '/etc/passwd',
      '..\\..\\windows\\win.ini',
      `${'a'.repeat(4000)}.jpg`,
      '.',
      '..',
      'folder/',
      '%2e%2e%2fpasswd',
    ]) {
      const before = storageFiles(portal.dataDir);
      const answer = await send(files.goodJpeg, name);
      const item = await expectItem(answer, before, 'ready');
      expect(JSON.stringify(item)).not.toContain('passwd');
      expect(JSON.stringify(item)).not.toContain('win.ini');
    }
    // Nothing was written beside or above the data folder.
    expect(existsSync(join(portal.dataDir, '..', 'passwd'))).toBe(false);
    expect(existsSync(join(portal.dataDir, 'passwd'))).toBe(false);
  });

  it('refuses a NUL byte in a file name as a malformed upload', async () => {
    const before = storageFiles(portal.dataDir);
    const answer = await send(files.goodJpeg, 'photo\0.jpg');
    if (_way === 'resumable') {
      // In tus metadata the name is base64: it is only a label there, and the file is taken in.
      await expectItem(answer, before, 'ready');
    } else {
      await expectRefused(answer, before, 400, 'The upload was cut off or malformed');
    }
  });
});

describe('lying requests to POST /api/evidence', () => {
  const head = (length: number, contentType: string) => [
    'POST /api/evidence HTTP/1.1',
    `Host: ${new URL(portal.url).host}`,
    `Cookie: ${cookieOf(participant)}`,
    `Content-Type: ${contentType}`,
    `Content-Length: ${length}`,
  ];

  it('a Content-Length longer than the body: a 400, and the partial file is removed', async () => {
    const before = storageFiles(portal.dataDir);
    const { body, contentType } = multipartBody(
      { title: 'Cut off' },
      { field: 'file', filename: 'a.jpg', type: 'image/jpeg', bytes: files.goodJpeg },
    );
    const sent = body.subarray(0, Math.floor(body.length / 2));
    const exchange = await rawHttp(portal.url, head(body.length, contentType), sent);
    expect(exchange.statuses).toEqual([400]);
    expect(firstJsonBody(exchange)).toMatchObject({ code: 'validation_failed', message: expect.any(String) });
    await expectNothingLeft(portal.dataDir, before);
    await expectServiceUp();
  });

  it('a Content-Length shorter than the body: the form ends early, a 400, nothing kept', async () => {
    const before = storageFiles(portal.dataDir);
    const { body, contentType } = multipartBody(
      { title: 'Too much' },
      { field: 'file', filename: 'a.jpg', type: 'image/jpeg', bytes: files.goodJpeg },
    );
    const exchange = await rawHttp(portal.url, head(Math.floor(body.length / 2), contentType), body);
    expect(exchange.statuses[0]).toBe(400);
    expect(firstJsonBody(exchange)).toMatchObject({ code: 'validation_failed', message: expect.any(String) });
    await expectNothingLeft(portal.dataDir, before);
    await expectServiceUp();
  });

  it('a file with an invalid title: refused, and its temporary file removed', async () => {
    const before = storageFiles(portal.dataDir);
    const { body, contentType } = multipartBody(
      { title: '' },
      { field: 'file', filename: 'a.jpg', type: 'image/jpeg', bytes: files.goodJpeg },
    );
    const answer = await answerOf(
      await fetch(new URL('/api/evidence', portal.url), {
        method: 'POST',
        headers: { 'content-type': contentType, cookie: cookieOf(participant) },
        body: new Uint8Array(body),
      }),
    );
    await expectRefused(answer, before, 400, MESSAGES.titleRequired);
  });

  it('a file from a visitor (no session): a 401, and its temporary file removed', async () => {
    const before = storageFiles(portal.dataDir);
    const { body, contentType } = multipartBody(
      { title: 'Anonymous' },
      { field: 'file', filename: 'a.jpg', type: 'image/jpeg', bytes: files.goodJpeg },
    );
    const answer = await answerOf(
      await fetch(new URL('/api/evidence', portal.url), {
        method: 'POST',
        headers: { 'content-type': contentType },
        body: new Uint8Array(body),
      }),
    );
    await expectRefused(answer, before, 401, MESSAGES.notSignedIn);
  });
});

describe('lying requests to resumable uploads', () => {
  async function created(length: number): Promise<string> {
    const response = await participant.request('POST', '/api/evidence/uploads', {
      headers: { ...TUS, 'upload-length': String(length), 'upload-metadata': `title ${b64('Resumable')}` },
    });
    expect(response.status).toBe(201);
    return response.headers.get('location')!;
  }
  /** A PATCH of `body` at `offset`, its Content-Length set by fetch. */
  const patchAt = (location: string, offset: number, body: Uint8Array<ArrayBuffer>) =>
    fetch(new URL(location, portal.url), {
      method: 'PATCH',
      headers: {
        ...TUS,
        'upload-offset': String(offset),
        'content-type': 'application/offset+octet-stream',
        cookie: cookieOf(participant),
      },
      body,
    });
  /** Sends the rest of the photo from `offset`: the item comes out ready, its original the photo's bytes. */
  async function resumeToTheEnd(location: string, offset: number, photo: Buffer, before: ReturnType<typeof storageFiles>): Promise<void> {
    const rest = await patchAt(location, offset, new Uint8Array(photo.subarray(offset)));
    const item = await expectItem(await answerOf(rest), before, 'ready');
    expect(Buffer.compare((await participant.bytes(`/media/evidence/${item.id}/original`)).body, photo)).toBe(0);
  }
  const patchHead = (location: string, offset: number, length: number) => [
    `PATCH ${location} HTTP/1.1`,
    `Host: ${new URL(portal.url).host}`,
    `Cookie: ${cookieOf(participant)}`,
    'Tus-Resumable: 1.0.0',
    `Upload-Offset: ${offset}`,
    'Content-Type: application/offset+octet-stream',
    `Content-Length: ${length}`,
  ];

  it('a PATCH whose Content-Length is longer than its body keeps what arrived: the upload resumes and completes', async () => {
    const photo = files.goodJpeg;
    const before = storageFiles(portal.dataDir);
    const location = await created(photo.length);
    const half = Math.floor(photo.length / 2);
    await rawHttp(portal.url, patchHead(location, 0, photo.length), photo.subarray(0, half));
    const head = await participant.request('HEAD', location, { headers: TUS });
    expect(head.status).toBe(200);
    const offset = Number(head.headers.get('upload-offset'));
    expect(offset).toBeLessThanOrEqual(half);
    await resumeToTheEnd(location, offset, photo, before);
  });

  it('a PATCH whose Content-Length is shorter than its body: a 400 for the bytes after it; the upload resumes from what was kept', async () => {
    const photo = files.goodJpeg;
    const before = storageFiles(portal.dataDir);
    const location = await created(photo.length);
    const exchange = await rawHttp(portal.url, patchHead(location, 0, 1000), photo);
    // The bytes after the announced body are no request: the gateway answers 400 and closes.
    expect(exchange.statuses.at(-1)).toBe(400);
    expect(exchange.statuses.every((status) => status === 204 || status === 400)).toBe(true);
    const offset = Number((await participant.request('HEAD', location, { headers: TUS })).headers.get('upload-offset'));
    expect(offset).toBeLessThanOrEqual(1000);
    await resumeToTheEnd(location, offset, photo, before);
  });

  it('an unfinished upload the participant gives up is removed with everything it stored', async () => {
    const before = storageFiles(portal.dataDir);
    const location = await created(files.goodJpeg.length);
    const patch = await patchAt(location, 0, new Uint8Array(files.goodJpeg.subarray(0, 1000)));
    expect(patch.status).toBe(204);
    expect((await participant.request('DELETE', location, { headers: TUS })).status).toBe(204);
    await expectNothingLeft(portal.dataDir, before);
    await expectServiceUp();
  });

  it('a PATCH at the wrong offset, or past the announced length: a 409 or 400, and nothing written', async () => {
    const before = storageFiles(portal.dataDir);
    const location = await created(100);
    const wrongOffset = await patchAt(location, 50, new Uint8Array(50));
    expect(wrongOffset.status).toBe(409);
    expect(await wrongOffset.json()).toMatchObject({ code: expect.any(String), message: expect.any(String) });
    const tooLong = await patchAt(location, 0, new Uint8Array(500));
    expect(tooLong.status).toBe(413);
    expect(await tooLong.json()).toMatchObject({ code: expect.any(String), message: expect.any(String) });
    expect((await participant.request('HEAD', location, { headers: TUS })).headers.get('upload-offset')).toBe('0');
    expect((await participant.request('DELETE', location, { headers: TUS })).status).toBe(204);
    await expectNothingLeft(portal.dataDir, before);
  });

  it('an upload of deferred length cannot grow past the limit', async () => {
    const before = storageFiles(portal.dataDir);
    const response = await participant.request('POST', '/api/evidence/uploads', {
      headers: { ...TUS, 'upload-defer-length': '1', 'upload-metadata': `title ${b64('Endless')}` },
    });
    expect(response.status).toBe(201);
    const location = response.headers.get('location')!;
    const patch = await patchAt(location, 0, new Uint8Array(1100 * 1024));
    expect(patch.status).toBe(413);
    expect(await patch.json()).toMatchObject({ code: 'payload_too_large', message: 'The file is too large (at most 1 MB)' });
    expect((await participant.request('DELETE', location, { headers: TUS })).status).toBe(204);
    await expectNothingLeft(portal.dataDir, before);
    await expectServiceUp();
  });

  it('upload ids that try to leave the uploads folder are unknown uploads', async () => {
    const database = readFileSync(join(portal.dataDir, 'evidence.sqlite'));
    const tries = [
      ['..%2Fevidence.sqlite', 400],
      ['..%2F..%2Fevidence.sqlite', 400],
      ['%2E%2E%2Fevidence.sqlite', 400],
      ['..%5Cevidence.sqlite', 400],
      ['x%00y', 404],
    ] as const;
    for (const [id, status] of tries) {
      for (const method of ['HEAD', 'PATCH', 'DELETE']) {
        const response = await fetch(new URL(`/api/evidence/uploads/${id}`, portal.url), {
          method,
          headers: { ...TUS, 'upload-offset': '0', 'content-type': 'application/offset+octet-stream', cookie: cookieOf(participant) },
          ...(method === 'PATCH' ? { body: new Uint8Array(10) } : {}),
        });
        expect(response.status, `${method} ${id}`).toBe(status);
        if (method !== 'HEAD')
          expect(await response.json(), `${method} ${id}`).toMatchObject({ code: expect.any(String), message: expect.any(String) });
      }
    }
    expect(existsSync(join(portal.dataDir, 'evidence.sqlite'))).toBe(true);
    expect(readFileSync(join(portal.dataDir, 'evidence.sqlite')).length).toBeGreaterThanOrEqual(database.length / 2);
    await expectServiceUp();
  });

  it('metadata that is not base64, or a title too long: a 400 with the reason', async () => {
    const before = storageFiles(portal.dataDir);
    const garbled = await participant.request('POST', '/api/evidence/uploads', {
      headers: { ...TUS, 'upload-length': '10', 'upload-metadata': 'title !!!not base64!!!' },
    });
    expect(garbled.status).toBe(400);
    expect(garbled.data).toMatchObject({ code: expect.any(String), message: expect.any(String) });
    const long = await participant.request('POST', '/api/evidence/uploads', {
      headers: { ...TUS, 'upload-length': '10', 'upload-metadata': `title ${b64('t'.repeat(5000))}` },
    });
    expect(long.status).toBe(400);
    expect(long.data).toMatchObject({ code: 'validation_failed', message: expect.any(String) });
    await expectNothingLeft(portal.dataDir, before);
  });
});

describe('hostile pictures for identity (registration photo and avatar)', () => {
  let counter = 0;
  const identityFiles = (path: string) => path.startsWith('tmp/identity-uploads/') || path.startsWith('blobs/');

  async function register(bytes: Buffer, name = 'face.jpg', type = 'image/jpeg'): Promise<{ answer: Answer; username: string }> {
    counter += 1;
    const username = `hostile_${counter}`;
    const form = registrationForm(
      { username, email: `${username}@example.org`, usernameOrEmail: `${username}@example.org` },
      { bytes, name, type },
    );
    const response = await new ApiClient(portal.url).postForm('/api/user/register', form);
    return { answer: { status: response.status, data: response.data }, username };
  }

  async function avatar(bytes: Buffer, name = 'me.jpg', type = 'image/jpeg'): Promise<Answer> {
    const { body, contentType } = multipartBody(
      { email: 'avatar_owner@example.org', phone_number: '5551234567', pronouns: '' },
      { field: 'file', filename: name, type, bytes },
    );
    return answerOf(
      await fetch(new URL('/api/evidence/user', portal.url), {
        method: 'PUT',
        headers: { 'content-type': contentType, cookie: cookieOf(owner) },
        body: new Uint8Array(body),
      }),
    );
  }

  let owner: ApiClient;
  beforeAll(async () => {
    owner = (await newParticipant(portal.url, { email: 'avatar_owner@example.org' })).client;
  });

  async function expectNoAccount(username: string): Promise<void> {
    const check = await new ApiClient(portal.url).post('/api/user/check', { username });
    expect(check.data.exists, `${username} was not created`).toBe(false);
    expect((await new ApiClient(portal.url).get('/api/config')).status).toBe(200);
  }

  const NOT_AN_IMAGE = 415;
  const refusedPictures = () =>
    [
      ['a truncated JPEG', files.truncatedJpeg, 'face.jpg', 'image/jpeg', NOT_AN_IMAGE, null],
      ['a corrupt JPEG', files.corruptJpeg, 'face.jpg', 'image/jpeg', NOT_AN_IMAGE, null],
      ['a PNG decompression bomb', files.pngBomb, 'face.png', 'image/png', 413, 'The picture has too many pixels (at most 50 megapixels)'],
      [
        'a JPEG decompression bomb',
        files.jpegBomb,
        'face.jpg',
        'image/jpeg',
        413,
        'The picture has too many pixels (at most 50 megapixels)',
      ],
      ['text called face.jpg', files.text, 'face.jpg', 'image/jpeg', NOT_AN_IMAGE, null],
      ['an SVG with a script', files.svg, 'face.png', 'image/png', NOT_AN_IMAGE, null],
      ['an HTML page', files.html, 'face.png', 'image/png', NOT_AN_IMAGE, null],
      ['an empty file', Buffer.alloc(0), 'face.jpg', 'image/jpeg', NOT_AN_IMAGE, null],
      [
        'a file over the limit',
        Buffer.concat([files.goodJpeg, Buffer.alloc(250 * 1024, 1)]),
        'face.jpg',
        'image/jpeg',
        413,
        /is too large \(at most 200 KB\)/,
      ],
      ['a NUL byte in the file name', files.goodJpeg, 'face\0.jpg', 'image/jpeg', 400, 'The upload was cut off or malformed'],
    ] as const;

  it('refuses every hostile registration photo with a 4xx, creates no account and keeps no file', async () => {
    for (const [what, bytes, name, type, status, message] of refusedPictures()) {
      const before = storageFiles(portal.dataDir);
      const { answer, username } = await register(bytes, name, type);
      expect(answer.status, what).toBe(status);
      expect(answer.data, what).toMatchObject({
        code: expect.any(String),
        message: message === null ? MESSAGES.photoNotImage : typeof message === 'string' ? message : expect.stringMatching(message),
      });
      await expectNothingLeft(portal.dataDir, before, () => false, what);
      await expectNoAccount(username);
    }
  });

  it('refuses every hostile avatar with a 4xx, keeps the profile as it was and keeps no file', async () => {
    const was = (await owner.get('/api/user')).data;
    for (const [what, bytes, name, type, status, message] of refusedPictures()) {
      const before = storageFiles(portal.dataDir);
      const answer = await avatar(bytes, name, type);
      expect(answer.status, what).toBe(status);
      expect(answer.data, what).toMatchObject({
        code: expect.any(String),
        message: message === null ? MESSAGES.avatarNotImage : typeof message === 'string' ? message : expect.stringMatching(message),
      });
      await expectNothingLeft(portal.dataDir, before, () => false, what);
      expect((await owner.get('/api/user')).data.avatar_AWS_URL, what).toBe(was.avatar_AWS_URL);
    }
  });

  it('stores a polyglot photo re-encoded: the ZIP inside never reaches storage', async () => {
    const { answer } = await register(files.jpegZip);
    expect(answer.status).toBe(201);
    const admin = new ApiClient(portal.url);
    await admin.post('/api/user/login', { username: 'overseer', password: 'overseer-pass-1' });
    const photo = await admin.bytes(`/api/user/${answer.data.id}/verification-photo`);
    expect(photo.status).toBe(200);
    expect(photo.headers.get('content-type')).toBe('image/jpeg');
    expect(photo.body.includes(ZIP_SIGNATURE)).toBe(false);

    const updated = await avatar(files.gifJs, 'me.gif', 'application/javascript');
    expect(updated.status).toBe(200);
    const stored = await owner.bytes(updated.data.avatar_AWS_URL);
    expect(stored.headers.get('content-type')).toBe('image/webp');
    expect(stored.body.includes(Buffer.from(GIF_SCRIPT))).toBe(false);
  });

  it('ignores hostile file names of pictures', async () => {
    for (const name of ['../../etc/passwd', '/etc/passwd', '..\\..\\boot.ini', `${'b'.repeat(4000)}.jpg`]) {
      const before = storageFiles(portal.dataDir);
      const { answer } = await register(files.goodJpeg, name);
      expect(answer.status, name).toBe(201);
      const left = [...storageFiles(portal.dataDir)].filter((path) => !before.has(path));
      expect(
        left.every((path) => path.includes(`/users/${answer.data.id}/`)),
        left.join(', '),
      ).toBe(true);
    }
    expect(existsSync(join(portal.dataDir, 'passwd'))).toBe(false);
  });

  it('answers lying Content-Lengths on registration with a 400 and keeps no partial file', async () => {
    const form = multipartBody(
      {
        username: 'liar_1',
        email: 'liar_1@example.org',
        usernameOrEmail: 'liar_1@example.org',
        password: 'password1',
        phone_number: '5551234567',
        full_name: 'L',
        pronouns: '',
        role: '1',
      },
      { field: 'verification_photo', filename: 'face.jpg', type: 'image/jpeg', bytes: files.goodJpeg },
    );
    const head = (length: number) => [
      'POST /api/user/register HTTP/1.1',
      `Host: ${new URL(portal.url).host}`,
      `Content-Type: ${form.contentType}`,
      `Content-Length: ${length}`,
    ];
    let before = storageFiles(portal.dataDir);
    const longer = await rawHttp(portal.url, head(form.body.length), form.body.subarray(0, form.body.length - 2000));
    expect(longer.statuses).toEqual([400]);
    expect(firstJsonBody(longer)).toMatchObject({ code: 'validation_failed', message: expect.any(String) });
    await expectNothingLeft(portal.dataDir, before, () => false, 'a cut-off registration');
    before = storageFiles(portal.dataDir);
    const shorter = await rawHttp(portal.url, head(form.body.length - 2000), form.body);
    expect(shorter.statuses[0]).toBe(400);
    await expectNothingLeft(portal.dataDir, before, () => false, 'an over-long registration');
    await expectNoAccount('liar_1');
  });

  it('leaves nothing in the identity folders once all of that is over', async () => {
    const leftovers = [...storageFiles(portal.dataDir)].filter((path) => identityFiles(path) && path.startsWith('tmp/'));
    expect(leftovers).toEqual([]);
  });
});
