import { request } from 'node:http';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MESSAGES, UPLOAD_CHUNK_MAX } from '@portal/contracts';
import { ApiClient } from '../support/api-client.js';
import { newParticipant } from '../support/accounts.js';
import { waitForMedia } from '../support/evidence.js';
import { makeMediaFixtures, type MediaFixtures } from '../support/media-fixtures.js';
import { NO_FACE_CHECK, startTestPortal, type TestPortal } from '../support/portal.js';

let portal: TestPortal;
let fixtures: MediaFixtures;
let scratch: string;
beforeAll(async () => {
  scratch = mkdtempSync(join(tmpdir(), 'tus-'));
  [portal, fixtures] = await Promise.all([
    startTestPortal({
      ...NO_FACE_CHECK,
      EVIDENCE_VIDEO_MAX_BYTES: '30mb',
      EVIDENCE_IMAGE_MAX_BYTES: '5mb',
      EVIDENCE_AUDIO_MAX_BYTES: '5mb',
    }),
    makeMediaFixtures(scratch),
  ]);
}, 120_000);
afterAll(async () => {
  await portal.dispose();
  rmSync(scratch, { recursive: true, force: true });
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

function patch(client: ApiClient, location: string, offset: number, body: Buffer) {
  return fetch(new URL(location, portal.url), {
    method: 'PATCH',
    headers: {
      ...TUS,
      'upload-offset': String(offset),
      'content-type': 'application/offset+octet-stream',
      cookie: [...client.cookies].map(([name, value]) => `${name}=${value}`).join('; '),
    },
    body: new Uint8Array(body),
  });
}

/** Sends the start of a PATCH body and then drops the connection, like a phone losing signal. */
function interruptedPatch(client: ApiClient, location: string, body: Buffer, sendBytes: number): Promise<void> {
  return new Promise((resolve) => {
    const url = new URL(location, portal.url);
    const req = request(url, {
      method: 'PATCH',
      headers: {
        ...TUS,
        'upload-offset': '0',
        'content-type': 'application/offset+octet-stream',
        'content-length': String(body.length),
        cookie: [...client.cookies].map(([name, value]) => `${name}=${value}`).join('; '),
      },
    });
    req.on('error', () => resolve());
    req.on('close', () => resolve());
    req.write(body.subarray(0, sendBytes), () => {
      setTimeout(() => req.destroy(), 300);
    });
  });
}

describe('resumable uploads (tus)', () => {
  it('survives a dropped connection: resumes from the stored offset and ends as one item', async () => {
    const { client } = await newParticipant(portal.url);
    const video = readFileSync(fixtures.phoneMp4);
    const created = await createUpload(client, video.length, {
      title: 'From the corner',
      notes: 'shaky',
      location: '40.1, -74.2',
      filename: 'clip.mp4',
    });
    expect(created.status).toBe(201);
    const location = created.headers.get('location')!;
    // The id starts with its owner's id, so that their unfinished uploads are found by prefix (the quota).
    expect(location).toMatch(/^\/api\/evidence\/uploads\/[0-9a-f-]{36}\.[0-9a-f]{32}$/);

    await interruptedPatch(client, location, video, Math.floor(video.length / 2));
    let offset = 0;
    for (let i = 0; i < 50 && offset === 0; i++) {
      const head = await client.request('HEAD', location, { headers: TUS });
      expect(head.status).toBe(200);
      offset = Number(head.headers.get('upload-offset'));
      if (offset === 0) await delay(100);
    }
    expect(offset).toBeGreaterThan(0);
    expect(offset).toBeLessThan(video.length);

    const other = await newParticipant(portal.url);
    expect((await other.client.request('HEAD', location, { headers: TUS })).status).toBe(403);
    expect((await patch(other.client, location, offset, video.subarray(offset))).status).toBe(403);
    expect((await new ApiClient(portal.url).request('HEAD', location, { headers: TUS })).status).toBe(401);

    const finish = await patch(client, location, offset, video.subarray(offset));
    expect(finish.status).toBe(200);
    const item = await finish.json();
    expect(item).toMatchObject({
      title: 'From the corner',
      notes: 'shaky',
      location: '40.1, -74.2',
      media_type: 3,
      media_status: 'processing',
    });
    expect(finish.headers.get('x-evidence-id')).toBe(item.id);

    // A client that lost that answer asks again and learns the upload is complete: no second item.
    const again = await client.request('HEAD', location, { headers: TUS });
    expect(again.status).toBe(200);
    expect(again.headers.get('upload-offset')).toBe(String(video.length));
    expect(again.headers.get('x-evidence-id')).toBe(item.id);
    expect((await client.get('/api/evidence')).data.map((entry: { id: string }) => entry.id)).toEqual([item.id]);

    const ready = await waitForMedia(client, item.id);
    expect(ready.media_status).toBe('ready');
    const original = await client.bytes(`/media/evidence/${item.id}/original`);
    expect(Buffer.compare(original.body, video)).toBe(0);
  });

  it('refuses an upload without a session, without a title, or larger than allowed', async () => {
    expect((await createUpload(new ApiClient(portal.url), 100, { title: 'x' })).status).toBe(401);
    const { client } = await newParticipant(portal.url);
    const untitled = await createUpload(client, 100, { notes: 'no title' });
    expect(untitled.status).toBe(400);
    expect(untitled.data.message).toBe(MESSAGES.titleRequired);
    const huge = await createUpload(client, 31 * 1024 * 1024, { title: 'Too big' });
    expect(huge.status).toBe(413);
    expect(huge.data.message).toBe('The file is too large (at most 30 MB)');
  });

  it("takes the web app's largest chunk in one PATCH through the gateway", async () => {
    const { client } = await newParticipant(portal.url);
    const chunk = Buffer.alloc(UPLOAD_CHUNK_MAX, 7);
    const created = await createUpload(client, UPLOAD_CHUNK_MAX + 1024, { title: 'A long video', filename: 'long.mp4' });
    expect(created.status).toBe(201);
    const location = created.headers.get('location')!;
    const response = await patch(client, location, 0, chunk);
    expect(response.status).toBe(204);
    expect(response.headers.get('upload-offset')).toBe(String(UPLOAD_CHUNK_MAX));
    const head = await client.request('HEAD', location, { headers: TUS });
    expect(head.headers.get('upload-offset')).toBe(String(UPLOAD_CHUNK_MAX));
    expect((await client.request('DELETE', location, { headers: TUS })).status).toBe(204);
  });

  it('refuses a finished upload that is not media, and keeps nothing of it', async () => {
    const { client } = await newParticipant(portal.url);
    const text = readFileSync(fixtures.textAsMp4);
    const created = await createUpload(client, text.length, { title: 'Not a video' });
    const response = await patch(client, created.headers.get('location')!, 0, text);
    expect(response.status).toBe(415);
    expect((await response.json()).message).toBe(MESSAGES.unsupportedEvidenceFile);
    expect((await client.get('/api/evidence')).data).toEqual([]);
  });

  it('ignores an owner a client tries to set in the metadata', async () => {
    const victim = await newParticipant(portal.url);
    const { client } = await newParticipant(portal.url);
    const photo = readFileSync(fixtures.jpegWithGps);
    const created = await createUpload(client, photo.length, { title: 'Mine', owner: victim.user.id });
    const done = await patch(client, created.headers.get('location')!, 0, photo);
    expect(done.status).toBe(200);
    expect((await done.json()).user_id).not.toBe(victim.user.id);
    expect((await victim.client.get('/api/evidence')).data).toEqual([]);
  });
});
