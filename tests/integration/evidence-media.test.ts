import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import sharp from 'sharp';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MESSAGES } from '@portal/contracts';
import { locateFfmpeg, probeMedia } from '@portal/platform';
import { waitFor } from '@portal/platform/testing';
import { ApiClient } from '../support/api-client.js';
import { adminClient, newParticipant, publishedEvents } from '../support/accounts.js';
import { uploadEvidence, waitForMedia, type EvidenceItem } from '../support/evidence.js';
import { makeMediaFixtures, makeTestVideo, type MediaFixtures } from '../support/media-fixtures.js';
import { NO_FACE_CHECK, startTestPortal, type TestPortal } from '../support/portal.js';

const execFileAsync = promisify(execFile);

let portal: TestPortal;
let fixtures: MediaFixtures;
let scratch: string;
beforeAll(async () => {
  scratch = mkdtempSync(join(tmpdir(), 'evidence-media-'));
  [portal, fixtures] = await Promise.all([
    // Archive answers are kept 30 s by the gateway here, so that a change that shows at once is
    // not explained by an entry running out.
    startTestPortal({ ...NO_FACE_CHECK, EVIDENCE_IMAGE_MAX_BYTES: '5mb', EVIDENCE_AUDIO_MAX_BYTES: '200kb', PUBLIC_CACHE_TTL_MS: '30000' }),
    makeMediaFixtures(join(scratch, 'fixtures')),
  ]);
}, 120_000);
afterAll(async () => {
  await portal.dispose();
  rmSync(scratch, { recursive: true, force: true });
});

async function saved(client: ApiClient, url: string, name: string): Promise<string> {
  const response = await client.bytes(url);
  expect(response.status, url).toBe(200);
  const path = join(scratch, name);
  writeFileSync(path, response.body);
  return path;
}

describe('uploading evidence', () => {
  it('files a note without a file as media type 1', async () => {
    const { client, user } = await newParticipant(portal.url);
    const response = await client.post('/api/evidence', {
      title: 'Saw a van',
      notes: 'Blue, no plates',
      location: '40.71280, -74.00600 (±15 m)',
    });
    expect(response.status).toBe(201);
    expect(response.data).toMatchObject({
      title: 'Saw a van',
      notes: 'Blue, no plates',
      location: '40.71280, -74.00600 (±15 m)',
      media_type: 1,
      media_status: 'none',
      aws_url: null,
      is_public: false,
      user_id: user.id,
      username: user.username,
    });
  });

  it('decides the media type from the bytes, whatever the client claims', async () => {
    const { client } = await newParticipant(portal.url);
    const cases: [string, string, number][] = [
      [fixtures.jpegWithGps, 'video/mp4', 2],
      [fixtures.phoneMp4, 'image/jpeg', 3],
      [fixtures.chromeAudioWebm, 'video/webm', 4],
      [fixtures.voiceMemoM4a, 'video/mp4', 4],
    ];
    for (const [file, claimed, expected] of cases) {
      const response = await uploadEvidence(client, file, {}, claimed);
      expect(response.status, file).toBe(201);
      expect(response.data.media_type, file).toBe(expected);
      expect(response.data.media_status).toBe('processing');
    }
  });

  it('refuses what is not media, empty files, files over the limit of their type, and a missing title', async () => {
    const { client } = await newParticipant(portal.url);
    const text = await uploadEvidence(client, fixtures.textAsMp4, {}, 'video/mp4');
    expect(text.status).toBe(415);
    expect(text.data.message).toBe(MESSAGES.unsupportedEvidenceFile);
    const empty = join(scratch, 'empty.jpg');
    writeFileSync(empty, '');
    expect((await uploadEvidence(client, empty)).data.message).toBe(MESSAGES.emptyFile);
    const tooLong = await uploadEvidence(client, fixtures.longMp3); // audio limit is 200 KB here
    expect(tooLong.status).toBe(413);
    expect(tooLong.data.message).toBe('Audio recordings can be at most 200 KB');
    // A video cut off before its index cannot even be inspected: refused at once.
    const cut = await uploadEvidence(client, fixtures.truncatedMp4);
    expect(cut.status).toBe(415);
    const untitled = await uploadEvidence(client, fixtures.jpegWithGps, { title: '  ' });
    expect(untitled.status).toBe(400);
    expect(untitled.data.message).toBe(MESSAGES.titleRequired);
    const mine = await client.get('/api/evidence?limit=100');
    expect(mine.data).toEqual([]);
  });
});

describe('processed media', () => {
  it('serves a photo as WebP without GPS, and never the original to a visitor', async () => {
    const { client } = await newParticipant(portal.url);
    const created = await uploadEvidence(client, fixtures.jpegWithGps, { title: 'Photo' });
    const item = await waitForMedia(client, created.data.id);
    expect(item.media_status).toBe('ready');
    expect(item.aws_url).toMatch(/^\/media\/evidence\/.+\/display\?v=1$/);
    expect(item.thumbnail_url).toMatch(/\/thumb\?v=1$/);
    expect(item.placeholder).toBeTruthy();
    const display = await client.bytes(item.aws_url!);
    expect(display.headers.get('content-type')).toBe('image/webp');
    expect((await sharp(display.body).metadata()).exif).toBeUndefined();
    expect(display.headers.get('cache-control')).toBe('private, no-store');

    const { client: admin } = await adminClient(portal.url);
    expect((await admin.put(`/api/evidence/clearance/${item.id}`)).data.is_public).toBe(true);
    const visitor = new ApiClient(portal.url);
    const publicCopy = await visitor.bytes(item.aws_url!);
    expect(publicCopy.status).toBe(200);
    expect(publicCopy.headers.get('cache-control')).toBe('public, max-age=3600');
    expect(Buffer.compare(publicCopy.body, readFileSync(fixtures.jpegWithGps))).not.toBe(0);
    expect((await visitor.bytes(item.aws_url!.replace('/display', '/original'))).status).toBe(404);
    const original = await client.bytes(item.aws_url!.replace('/display', '/original'));
    expect(original.headers.get('cache-control')).toBe('private, no-store');
    expect(Buffer.compare(original.body, readFileSync(fixtures.jpegWithGps))).toBe(0);
  });

  it('serves a phone video as playable H.264 MP4 without its location, with byte ranges for seeking', async () => {
    const { client } = await newParticipant(portal.url);
    const item = await waitForMedia(client, (await uploadEvidence(client, fixtures.phoneMp4, { title: 'Video' })).data.id);
    expect(item).toMatchObject({ media_status: 'ready', media_type: 3 });
    expect(item.poster_url).toMatch(/\/poster\?v=1$/);
    expect(item.duration).toBeGreaterThan(2);
    const path = await saved(client, item.aws_url!, 'served.mp4');
    const probe = await probeMedia(path);
    expect(probe.streams.map((stream) => stream.codec_name).sort()).toEqual(['aac', 'h264']);
    expect(readFileSync(path).includes(Buffer.from('40.7128'))).toBe(false);

    const partial = await client.request('GET', item.aws_url!, { headers: { range: 'bytes=100-199' } });
    expect(partial.status).toBe(206);
    expect(partial.headers.get('content-range')).toMatch(/^bytes 100-199\/\d+$/);
    expect(partial.headers.get('content-length')).toBe('100');
    expect(partial.headers.get('accept-ranges')).toBe('bytes');
    const open = await client.request('GET', item.aws_url!, { headers: { range: 'bytes=-10' } });
    expect(open.status).toBe(206);
    const outside = await client.request('GET', item.aws_url!, { headers: { range: 'bytes=999999999-' } });
    expect(outside.status).toBe(416);
    const head = await client.request('HEAD', item.aws_url!);
    expect(head.status).toBe(200);
    expect(Number(head.headers.get('content-length'))).toBeGreaterThan(1000);
  });

  it('makes a phone video ready with a remux of its own streams (no position, rotation kept), then swaps in the 720p copy under a new URL that the archive shows at once', async () => {
    // A phone's portrait video: 1080p H.264 + AAC in MOV, the picture turned by its display
    // matrix, the position in ©xyz; long enough that its 720p copy takes a few seconds.
    const file = join(scratch, 'corner.mov');
    const ffmpeg = (args: string[]) => execFileAsync(locateFfmpeg().ffmpeg, ['-v', 'error', '-y', ...args], { timeout: 60_000 });
    await makeTestVideo(join(scratch, 'corner-upright.mp4'), { size: '1920x1080', rate: 30, seconds: 15 });
    // The rotation is set on a stream copy (ffmpeg 5.1 writes the rotate tag as the display matrix then).
    await ffmpeg([
      '-i',
      join(scratch, 'corner-upright.mp4'),
      '-c',
      'copy',
      '-metadata',
      'location=+48.8584+002.2945/',
      '-metadata:s:v:0',
      'rotate=90',
      file,
    ]);
    expect(readFileSync(file).includes(Buffer.from('+48.8584+002.2945'))).toBe(true);
    const { client } = await newParticipant(portal.url);
    const { client: admin } = await adminClient(portal.url);
    const visitor = new ApiClient(portal.url);
    const id = (await uploadEvidence(client, file, { title: 'Corner, first copy' })).data.id as string;
    const first = await waitForMedia(client, id);
    expect(first).toMatchObject({ media_status: 'ready', aws_url: `/media/evidence/${id}/display?v=1-remuxed`, width: 1080, height: 1920 });
    expect(first.poster_url).toMatch(/\/poster\?v=1$/);
    const remuxed = await client.bytes(first.aws_url!);
    const remuxedPath = join(scratch, 'remuxed.mp4');
    writeFileSync(remuxedPath, remuxed.body);
    const probe = await probeMedia(remuxedPath);
    expect(probe.streams.find((stream) => stream.codec_type === 'video')).toMatchObject({ codec_name: 'h264', width: 1920, height: 1080 });
    expect(JSON.stringify(probe.streams)).toMatch(/"rotation":-?90/);
    expect(JSON.stringify([probe.format.tags, ...probe.streams.map((stream) => stream.tags)])).not.toMatch(/location|48\.8584/);
    for (const marker of ['48.8584', '\u00a9xyz', 'loci']) expect(remuxed.body.includes(Buffer.from(marker, 'latin1')), marker).toBe(false);

    // Published while the 720p copy is being made: the archive (kept by the gateway) names the first copy.
    expect((await admin.put(`/api/evidence/clearance/${id}`)).status).toBe(200);
    const archived = async () =>
      ((await visitor.get('/api/evidence/public?limit=50')).data as EvidenceItem[]).find((item) => item.id === id)?.aws_url;
    expect(await archived()).toBe(first.aws_url);
    // Kept by the gateway (after the settling time that follows a media result, 2 s).
    await waitFor(
      async () => {
        const kept = await visitor.request('GET', '/api/evidence/public?limit=50');
        const item = (kept.data as EvidenceItem[]).find((entry) => entry.id === id);
        return kept.headers.get('age') !== null && item?.aws_url === first.aws_url;
      },
      { timeoutMs: 10_000, intervalMs: 250, what: 'the archive kept by the gateway, naming the first copy' },
    );

    // The swap: a new URL; the archive shows it within moments, not when its 30 s entry runs out.
    await waitFor(async () => (await client.get(`/api/evidence/item/${id}`)).data.aws_url === `/media/evidence/${id}/display?v=1`, {
      timeoutMs: 90_000,
      what: 'the 720p copy',
    });
    await waitFor(async () => (await archived()) === `/media/evidence/${id}/display?v=1`, {
      timeoutMs: 5_000,
      what: 'the archive showing the 720p copy',
    });
    expect((await client.get(`/api/evidence/item/${id}`)).data).toMatchObject({ width: 720, height: 1280 });
    const transcoded = await visitor.bytes(`/media/evidence/${id}/display?v=1`);
    expect(transcoded.status).toBe(200);
    for (const marker of ['48.8584', '\u00a9xyz', 'loci'])
      expect(transcoded.body.includes(Buffer.from(marker, 'latin1')), marker).toBe(false);
    expect(transcoded.body.equals(remuxed.body)).toBe(false);
    // A player that started on the first copy keeps getting it, byte ranges included.
    const old = await visitor.bytes(first.aws_url!);
    expect(old.status).toBe(200);
    expect(old.body.equals(remuxed.body)).toBe(true);
    const range = await visitor.request('GET', first.aws_url!, { headers: { range: 'bytes=0-99' } });
    expect(range.status).toBe(206);
    expect(range.headers.get('content-range')).toBe(`bytes 0-99/${remuxed.body.length}`);
  }, 150_000);

  it('shows the poster and thumbnail of an HEVC video (transcoded before it is ready) while it is still processing: in the list, the review queue and as files', async () => {
    // What an iPhone records by default: HEVC (hvc1) + AAC in MOV. Long enough that its 720p
    // transcode takes seconds, during which the item is processing.
    const file = await makeTestVideo(join(scratch, 'iphone-hevc.mov'), { size: '1280x720', rate: 30, seconds: 15, codec: 'hevc' });
    expect((await probeMedia(file)).streams.find((stream) => stream.codec_type === 'video')?.codec_name).toBe('hevc');
    const { client } = await newParticipant(portal.url);
    const { client: admin } = await adminClient(portal.url);
    const title = `hevc-${Date.now()}`;
    const created = await uploadEvidence(client, file, { title });
    expect(created.status).toBe(201);
    const id = created.data.id as string;

    // While processing: the item, the owner's list and the review queue show its picture.
    const early = await waitFor(
      async () => {
        const item = (await client.get(`/api/evidence/item/${id}`)).data as EvidenceItem;
        // Ready (or failed) before any picture showed: the check below fails with what it was.
        return item.media_status !== 'processing' || item.thumbnail_url ? item : null;
      },
      { timeoutMs: 60_000, intervalMs: 100, what: 'the poster of the HEVC video while it is processing' },
    );
    expect(early).toMatchObject({ media_status: 'processing', aws_url: null });
    expect(early.poster_url).toMatch(/\/poster\?v=1$/);
    expect(early.placeholder).toEqual(expect.any(String));
    const thumbnail = await client.bytes(early.thumbnail_url!);
    const poster = await client.bytes(early.poster_url!);
    const own = ((await client.get(`/api/evidence?q=${title}`)).data as EvidenceItem[]).find((item) => item.id === id);
    const queued = ((await admin.get(`/api/evidence/admin?review_status=new&q=${title}`)).data as EvidenceItem[]).find(
      (item) => item.id === id,
    );
    const stillProcessing = ((await client.get(`/api/evidence/item/${id}`)).data as EvidenceItem).media_status === 'processing';
    expect(thumbnail.status).toBe(200);
    expect(thumbnail.headers.get('content-type')).toBe('image/webp');
    expect(poster.status).toBe(200);
    expect(await sharp(poster.body).metadata()).toMatchObject({ format: 'webp', width: 1280, height: 720 });
    expect(own?.thumbnail_url).toBe(early.thumbnail_url);
    expect(queued?.thumbnail_url).toBe(early.thumbnail_url);
    // All of the above was seen while the transcode still ran (else the test proves nothing).
    expect(stillProcessing).toBe(true);
    // Not to the public: a processing item is nobody else's.
    expect((await new ApiClient(portal.url).request('GET', early.thumbnail_url!)).status).toBe(404);

    const ready = await waitForMedia(client, id, 120_000);
    expect(ready).toMatchObject({ media_status: 'ready', thumbnail_url: early.thumbnail_url, poster_url: early.poster_url });
    expect(ready.aws_url).toMatch(/\/display\?v=1$/);
  }, 240_000);

  it('serves a Chrome WebM/Opus recording as AAC audio both Chrome and Safari play', async () => {
    const { client } = await newParticipant(portal.url);
    const item = await waitForMedia(
      client,
      (await uploadEvidence(client, fixtures.chromeAudioWebm, { title: 'Sound' }, 'audio/webm')).data.id,
    );
    expect(item).toMatchObject({ media_status: 'ready', media_type: 4 });
    const response = await client.bytes(item.aws_url!);
    expect(response.headers.get('content-type')).toBe('audio/mp4');
    const path = join(scratch, 'served.m4a');
    writeFileSync(path, response.body);
    expect((await probeMedia(path)).streams.map((stream) => stream.codec_name)).toEqual(['aac']);
  });

  it('shows a file that cannot be processed as failed, with the reason', async () => {
    const { client } = await newParticipant(portal.url);
    const created = await uploadEvidence(client, fixtures.corruptJpeg, { title: 'Corrupt' });
    expect(created.status).toBe(201);
    const item = await waitForMedia(client, created.data.id);
    expect(item.media_status).toBe('failed');
    expect(item.media_error).toMatch(/could not be processed/);
    expect(item.aws_url).toBeNull();
  });

  it('replaces the file of an item with a new revision and a new URL', async () => {
    const { client } = await newParticipant(portal.url);
    const first = await waitForMedia(client, (await uploadEvidence(client, fixtures.jpegWithGps, { title: 'Replace me' })).data.id);
    const form = new FormData();
    form.append('title', 'Replaced');
    form.append('notes', 'second try');
    const png = await sharp({ create: { width: 300, height: 200, channels: 3, background: '#0a0' } })
      .png()
      .toBuffer();
    form.append('file', new Blob([new Uint8Array(png)]), 'new.png');
    const updated = await client.putForm(`/api/evidence/update/${first.id}`, form);
    expect(updated.status).toBe(200);
    expect(updated.data).toMatchObject({ title: 'Replaced', media_status: 'processing' });
    const second = await waitForMedia(client, first.id);
    expect(second.aws_url).toMatch(/\?v=2$/);
    expect((await client.bytes(first.aws_url!)).status).toBe(200);
    const wrongKind = new FormData();
    wrongKind.append('title', 'x');
    wrongKind.append('file', new Blob([new Uint8Array(readFileSync(fixtures.voiceMemoM4a))]), 'memo.m4a');
    const refused = await client.putForm(`/api/evidence/update/${first.id}`, wrongKind);
    expect(refused.status).toBe(400);
    expect(refused.data.message).toBe('The new file must be a photo, like the one it replaces');
  });
});

describe('visibility and the public archive', () => {
  it('shows only public items whose media is ready, newest first, a page at a time, without private data', async () => {
    const owner = await newParticipant(portal.url);
    const { client: admin } = await adminClient(portal.url);
    await admin.put('/api/evidence/makeAllSecret');
    const ids: string[] = [];
    for (let i = 0; i < 3; i++) {
      const note = await owner.client.post('/api/evidence', { title: `Public note ${i}`, notes: 'n' });
      ids.push(note.data.id);
    }
    const privateNote = await owner.client.post('/api/evidence', { title: 'Stays private', notes: '' });
    for (const id of ids) expect((await admin.put(`/api/evidence/clearance/${id}`)).data.is_public).toBe(true);

    const visitor = new ApiClient(portal.url);
    const first = await visitor.get('/api/evidence/public?limit=2');
    expect(first.status).toBe(200);
    expect(first.data.map((item: EvidenceItem) => item.title)).toEqual(['Public note 2', 'Public note 1']);
    const next = /<([^>]+)>; rel="next"/.exec(first.headers.get('link')!)![1]!;
    const second = await visitor.get(next);
    expect(second.data.map((item: EvidenceItem) => item.title)).toEqual(['Public note 0']);
    expect(second.headers.get('link')).toBeNull();
    const text = JSON.stringify([...first.data, ...second.data]);
    expect(text).not.toContain(privateNote.data.id);
    expect(text).not.toMatch(/email|phone|verification/);
    expect(first.data[0]).toHaveProperty('username', owner.user.username);
    expect((await visitor.get('/api/evidence/public?type=2')).data).toEqual([]);

    const secret = await admin.put('/api/evidence/makeAllSecret');
    expect(secret.data).toEqual({ ok: true, changed: 3, is_public: false });
    expect((await visitor.get('/api/evidence/public')).data).toEqual([]);
    const open = await admin.put('/api/evidence/makeAllPublic');
    expect(open.data.changed).toBeGreaterThanOrEqual(4);
    await admin.put('/api/evidence/makeAllSecret');
  });

  it('announces creations, updates, visibility changes and deletions on the bus', async () => {
    const { client } = await newParticipant(portal.url);
    const { client: admin } = await adminClient(portal.url);
    const note = await client.post('/api/evidence', { title: 'Evented', notes: '' });
    await client.put(`/api/evidence/update/${note.data.id}`, { title: 'Evented again', notes: 'x' });
    await admin.put(`/api/evidence/clearance/${note.data.id}`);
    await client.delete(`/api/evidence/delete/${note.data.id}`);
    await waitFor(
      () => {
        const types = publishedEvents(portal.dataDir)
          .filter((e) => e.key === note.data.id)
          .map((e) => e.value.type);
        return ['evidence.created', 'evidence.updated', 'evidence.visibility-changed', 'evidence.deleted'].every((t) => types.includes(t));
      },
      { what: 'the four evidence events' },
    );
  });
});

describe('reactions to identity events', () => {
  it("keeps the author's username and avatar current on their items", async () => {
    const owner = await newParticipant(portal.url);
    const note = await owner.client.post('/api/evidence', { title: 'Signed', notes: '' });
    const { client: admin } = await adminClient(portal.url);
    const renamed = `${owner.user.username}_new`;
    await admin.put(`/api/user/admin/${owner.user.id}`, {
      username: renamed,
      email: owner.user.email,
      phone_number: '5551234567',
      full_name: 'Renamed',
    });
    const avatar = new FormData();
    for (const [k, v] of Object.entries({ email: owner.user.email, phone_number: '5551234567', pronouns: '' })) avatar.append(k, v);
    avatar.append(
      'file',
      new Blob([
        new Uint8Array(
          await sharp({ create: { width: 64, height: 64, channels: 3, background: '#f0f' } })
            .png()
            .toBuffer(),
        ),
      ]),
      'a.png',
    );
    const profile = await owner.client.putForm('/api/evidence/user', avatar);
    await waitFor(
      async () => {
        const item = (await owner.client.get(`/api/evidence/item/${note.data.id}`)).data;
        return item.username === renamed && item.avatar_AWS_URL === profile.data.avatar_AWS_URL;
      },
      { what: 'the new username and avatar on the item' },
    );
    const later = await owner.client.post('/api/evidence', { title: 'After', notes: '' });
    expect(later.data.avatar_AWS_URL).toBe(profile.data.avatar_AWS_URL);
  });

  it("removes a deleted participant's items and files", async () => {
    const owner = await newParticipant(portal.url);
    const item = await waitForMedia(owner.client, (await uploadEvidence(owner.client, fixtures.jpegWithGps, { title: 'Doomed' })).data.id);
    const { client: admin } = await adminClient(portal.url);
    expect((await admin.bytes(item.aws_url!)).status).toBe(200);
    expect((await admin.delete(`/api/user/${owner.user.id}`)).status).toBe(200);
    await waitFor(async () => (await admin.get(`/api/evidence/item/${item.id}`)).status === 404, { what: 'the item to go' });
    expect((await admin.bytes(item.aws_url!)).status).toBe(404);
    expect((await admin.get(`/api/user/${owner.user.id}/evidence`)).data).toEqual([]);
  });
});
