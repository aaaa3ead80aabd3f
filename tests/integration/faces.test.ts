import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import sharp from 'sharp';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { waitFor } from '@portal/platform/testing';
import { ApiClient } from '../support/api-client.js';
import { adminClient, newParticipant } from '../support/accounts.js';
import { uploadEvidence, waitForMedia, type EvidenceItem } from '../support/evidence.js';
import { GROUP_PHOTO, makeGroupVideo } from '../support/face-fixtures.js';
import { FaceCounter } from '../support/faces.js';
import { NO_FACE_CHECK, startTestPortal, type TestPortal } from '../support/portal.js';

// Faces blurred before the public sees them (docs/decisions/0044): on the all-in-one portal with
// its real media worker, FACE_BLUR at its default (auto); the portal's own detector reads what a
// visitor and the owner are served. Videos: tests/e2e/faces.test.ts (both modes) and
// services/media-worker/test/faces.test.ts (every frame of the public copy).
let portal: TestPortal;
let scratch: string;
let admin: ApiClient;
let counter: FaceCounter;
const visitor = () => new ApiClient(portal.url);

beforeAll(async () => {
  scratch = mkdtempSync(join(tmpdir(), 'faces-'));
  portal = await startTestPortal();
  admin = (await adminClient(portal.url)).client;
  counter = new FaceCounter();
}, 120_000);
afterAll(async () => {
  await counter.close();
  await portal.dispose();
  rmSync(scratch, { recursive: true, force: true });
});

type WithFaces = EvidenceItem & { faces: { check: string; count: number | null; consent: boolean; public_copy: string } | null };

const archived = async (id: string) =>
  ((await visitor().get('/api/evidence/public?limit=100')).data as WithFaces[]).find((item) => item.id === id) ?? null;

async function publishedPhoto(title: string) {
  const { client } = await newParticipant(portal.url);
  const id = (await uploadEvidence(client, GROUP_PHOTO, { title })).data.id as string;
  // Published at once, while the worker still looks for faces: the public gets nothing until the blurred copy exists.
  expect((await admin.put(`/api/evidence/clearance/${id}`)).data.is_public).toBe(true);
  const ready = (await waitForMedia(client, id)) as WithFaces;
  return { client, id, ready };
}

describe('published evidence with faces', () => {
  it('is served to visitors only blurred, to its owner and administrators as taken', async () => {
    const { client, id, ready } = await publishedPhoto('Group at the corner');
    expect(ready.faces).toEqual({ check: 'done', count: 3, consent: false, public_copy: 'blurred' });
    const shown = await waitFor(async () => archived(id), { timeoutMs: 10_000, what: 'the item in the archive' });
    // Every public URL is a blurred copy; the placeholder too is the blurred thumbnail's.
    expect(shown.aws_url).toMatch(new RegExp(`^/media/evidence/${id}/blurred-display\\?v=1-b0$`));
    expect(shown.thumbnail_url).toMatch(/\/blurred-thumb\?v=1-b0$/);
    expect(shown.placeholder).not.toBe(ready.placeholder);
    expect(shown.faces).toBeNull();
    const publicCopy = await visitor().bytes(shown.aws_url!);
    expect(publicCopy.status).toBe(200);
    expect(publicCopy.headers.get('cache-control')).toBe('public, max-age=3600');
    expect(await counter.inPicture(publicCopy.body)).toBe(0);
    expect(await counter.inPicture((await visitor().bytes(shown.thumbnail_url!)).body)).toBe(0);
    // The item alone, as a visitor asks for it, names the same copies.
    expect((await visitor().get(`/api/evidence/item/${id}`)).data.aws_url).toBe(shown.aws_url);

    // The owner's copy is the picture as taken: three faces. Never cached by anyone.
    const own = await client.bytes(ready.aws_url!);
    expect(own.headers.get('cache-control')).toBe('private, no-store');
    expect(await counter.inPicture(own.body)).toBe(3);
    // A visitor who guesses the unblurred copies' URLs gets nothing (not even that they exist).
    for (const variant of ['display', 'thumb', 'original']) {
      expect((await visitor().bytes(`/media/evidence/${id}/${variant}?v=1`)).status).toBe(404);
    }
    expect((await admin.bytes(ready.aws_url!)).status).toBe(200);
  }, 120_000);

  it('is not given to the public while its faces are looked for: a video published as soon as it is uploaded', async () => {
    // A playable phone video is ready for its owner with a remux of its streams in seconds; its
    // faces are looked for in the 720p copy that follows.
    const video = await makeGroupVideo(GROUP_PHOTO, join(scratch, 'group.mp4'), 2);
    const { client } = await newParticipant(portal.url);
    const id = (await uploadEvidence(client, video, { title: 'Published at once' })).data.id as string;
    await admin.put(`/api/evidence/clearance/${id}`);
    const first = (await waitForMedia(client, id)) as WithFaces;
    const seen: (string | null)[] = [];
    if (first.aws_url!.endsWith('-remuxed')) {
      expect(first.faces).toMatchObject({ check: 'pending', public_copy: 'pending' });
      expect(await archived(id)).toBeNull();
      expect((await visitor().get(`/api/evidence/item/${id}`)).status).toBe(404);
      expect((await visitor().bytes(first.aws_url!)).status).toBe(404);
    }
    // Polled until the 720p copy: whenever the archive lists it, it names the blurred copy.
    const final = await waitFor(
      async () => {
        const item = await archived(id);
        seen.push(item?.aws_url ?? null);
        return item;
      },
      { timeoutMs: 120_000, intervalMs: 100, what: 'the video in the archive' },
    );
    expect(seen.filter(Boolean).every((url) => url!.includes('/blurred-display?'))).toBe(true);
    expect(final.poster_url).toContain('/blurred-poster?');
    expect(((await client.get(`/api/evidence/item/${id}`)).data as WithFaces).faces).toMatchObject({
      check: 'done',
      public_copy: 'blurred',
    });
  }, 150_000);
});

describe("administrators' decisions", () => {
  it('a region removed (a poster on a wall) is shown once the copy is made again; the copy the public had stays until then', async () => {
    const { id } = await publishedPhoto('Poster on the wall');
    const faces = (await admin.get(`/api/evidence/${id}/faces`)).data;
    expect(faces).toMatchObject({ check: 'done', version: 0, consent: false, public_copy: 'blurred' });
    expect(faces.regions).toHaveLength(3);
    const before = (await waitFor(async () => archived(id), { timeoutMs: 10_000, what: 'the item in the archive' })).aws_url;
    const edited = await admin.put(`/api/evidence/${id}/faces`, { base: 0, removed: [faces.regions[0].id] });
    expect(edited.status).toBe(200);
    expect(edited.data).toMatchObject({ version: 1, public_copy: 'blurred' });
    expect(edited.data.regions[0].removed).toBe(true);
    // Less to hide: the item stays in the archive meanwhile, with the copy it had, then names the new copy.
    const meanwhile = await archived(id);
    expect(meanwhile, 'still in the archive').not.toBeNull();
    expect(meanwhile!.aws_url === before || meanwhile!.aws_url!.endsWith('-b1'), `${meanwhile!.aws_url} is the old or the new copy`).toBe(
      true,
    );
    const after = await waitFor(
      async () => {
        const item = await archived(id);
        return item && item.aws_url !== before && item.aws_url!.endsWith('-b1') ? item : null;
      },
      { timeoutMs: 30_000, what: 'the public copy made again' },
    );
    expect(await counter.inPicture((await visitor().bytes(after.aws_url!)).body)).toBe(1);

    // A stale version is refused, and so is a region the item does not have.
    expect((await admin.put(`/api/evidence/${id}/faces`, { base: 0, removed: [] })).status).toBe(409);
    const unknown = await admin.put(`/api/evidence/${id}/faces`, { base: 1, removed: ['f99'] });
    expect(unknown.status).toBe(400);
    expect(unknown.data.message).toMatch(/no face region f99/);
    // The act is in the audit log.
    const activity = await admin.get(`/api/admin/activity?action=evidence.faces-edit&target=${id}`);
    expect(activity.data).toMatchObject([{ action: 'evidence.faces-edit', before: { faces: 3 }, after: { faces: 2 } }]);
  }, 120_000);

  it('a box added takes the item out of the archive until its blurred copy is made', async () => {
    const { id } = await publishedPhoto('Someone the detector missed');
    await waitFor(async () => archived(id), { timeoutMs: 10_000, what: 'the item in the archive' });
    const edited = await admin.put(`/api/evidence/${id}/faces`, { base: 0, added: [{ x: 0.05, y: 0.6, w: 0.2, h: 0.3 }] });
    expect(edited.status).toBe(200);
    expect(edited.data.regions.at(-1)).toMatchObject({ source: 'added', removed: false, score: null });
    expect(edited.data.public_copy).toBe('pending');
    expect(await archived(id)).toBeNull();
    expect((await visitor().get(`/api/evidence/item/${id}`)).status).toBe(404);
    const back = await waitFor(async () => archived(id), { timeoutMs: 30_000, what: 'the item back in the archive' });
    expect(back.aws_url).toMatch(/-b1$/);
    // The added box is pixelated: its blocks are flat (compared with the owner's copy there).
    const picture = await sharp((await visitor().bytes(back.aws_url!)).body)
      .raw()
      .toBuffer({ resolveWithObject: true });
    const { width, height } = picture.info;
    const sample = (x: number, y: number) => picture.data[(Math.floor(y * height) * width + Math.floor(x * width)) * picture.info.channels];
    expect(sample(0.1, 0.75)).toBe(sample(0.1 + 1 / width, 0.75));
  }, 120_000);

  it('consent on record shows the faces; taking it back blurs them again; each is in the audit log', async () => {
    const { id, ready } = await publishedPhoto('Performers who agreed');
    const given = await admin.put(`/api/evidence/${id}/faces/consent`, { consent: true, note: 'signed releases, box office file 12' });
    expect(given.data).toMatchObject({ consent: true, public_copy: 'plain' });
    const plain = await waitFor(
      async () => {
        const item = await archived(id);
        return item?.aws_url?.includes('/display?') ? item : null;
      },
      { timeoutMs: 10_000, what: 'the picture as taken in the archive' },
    );
    expect(plain.aws_url).toBe(ready.aws_url);
    const shown = await visitor().bytes(plain.aws_url!);
    expect(shown.headers.get('cache-control')).toBe('public, max-age=3600');
    expect(await counter.inPicture(shown.body)).toBe(3);
    const withdrawn = await admin.put(`/api/evidence/${id}/faces/consent`, { consent: false });
    expect(withdrawn.data).toMatchObject({ consent: false, public_copy: 'blurred' });
    expect((await visitor().bytes(plain.aws_url!)).status).toBe(404);
    const entries = (await admin.get(`/api/admin/activity?action=evidence.faces-consent&target=${id}`)).data;
    expect(entries.map((entry: { after: unknown; details: unknown }) => [entry.after, entry.details])).toEqual([
      [{ faces_may_be_shown: false }, null],
      [{ faces_may_be_shown: true }, { note: 'signed releases, box office file 12' }],
    ]);
  }, 120_000);

  it('refuses what is not theirs to decide, and what makes no sense', async () => {
    const { client, id } = await publishedPhoto('Not yours');
    expect((await client.get(`/api/evidence/${id}/faces`)).status).toBe(403);
    expect((await client.put(`/api/evidence/${id}/faces/consent`, { consent: true })).status).toBe(403);
    expect((await visitor().put(`/api/evidence/${id}/faces`, { base: 0, added: [] })).status).toBe(401);
    const outside = await admin.put(`/api/evidence/${id}/faces`, { base: 0, added: [{ x: 0.9, y: 0.1, w: 0.3, h: 0.2 }] });
    expect(outside.status).toBe(400);
    expect(outside.data.message).toMatch(/inside the picture/);
    expect((await admin.put(`/api/evidence/${id}/faces/consent`, { consent: 'yes' })).status).toBe(400);
    const note = await client.post('/api/evidence', { title: 'A note', notes: 'no picture' });
    expect((await admin.put(`/api/evidence/${note.data.id}/faces/consent`, { consent: true })).status).toBe(400);
    expect((await admin.get('/api/evidence/00000000-0000-4000-8000-000000000000/faces')).status).toBe(404);
  }, 120_000);
});

it('shows an item without faces to the public as it is, and a photo not checked (FACE_BLUR=off) too', async () => {
  const plain = join(scratch, 'wall.jpg');
  writeFileSync(
    plain,
    await sharp({ create: { width: 800, height: 600, channels: 3, background: { r: 90, g: 90, b: 120 } } })
      .jpeg()
      .toBuffer(),
  );
  const { client } = await newParticipant(portal.url);
  const id = (await uploadEvidence(client, plain, { title: 'A wall' })).data.id as string;
  const ready = (await waitForMedia(client, id)) as WithFaces;
  expect(ready.faces).toEqual({ check: 'done', count: 0, consent: false, public_copy: 'plain' });
  await admin.put(`/api/evidence/clearance/${id}`);
  expect((await archived(id))!.aws_url).toBe(ready.aws_url);

  // An operator who turned the check off: the group photo is published as it is, and says so.
  const off = await startTestPortal({ FACE_BLUR: 'off' });
  try {
    const owner = (await newParticipant(off.url)).client;
    const photo = (await uploadEvidence(owner, GROUP_PHOTO, { title: 'Unchecked' })).data.id as string;
    expect(((await waitForMedia(owner, photo)) as WithFaces).faces).toEqual({
      check: 'off',
      count: null,
      consent: false,
      public_copy: 'plain',
    });
  } finally {
    await off.dispose();
  }
}, 90_000);

describe('items processed before faces were checked', () => {
  it('are hidden from the public when the portal checks faces, then shown only blurred; their owner sees them as taken', async () => {
    const dataDir = join(scratch, 'older-portal');
    // The release before: no face check. The group photo is processed and published as it is.
    const before = await startTestPortal(NO_FACE_CHECK, dataDir);
    let owner: Awaited<ReturnType<typeof newParticipant>>;
    let id: string;
    let taken: WithFaces;
    try {
      owner = await newParticipant(before.url);
      const client = owner.client;
      id = (await uploadEvidence(client, GROUP_PHOTO, { title: 'From before the check' })).data.id as string;
      taken = (await waitForMedia(client, id)) as WithFaces;
      const admin = (await adminClient(before.url)).client;
      expect((await admin.put(`/api/evidence/clearance/${id}`)).data.is_public).toBe(true);
    } finally {
      await before.stop();
    }
    // Its row as the migration left items of that release: never checked, nothing to blur.
    const db = new Database(join(dataDir, 'evidence.sqlite'));
    try {
      db.prepare(`UPDATE evidence SET face_check = NULL, face_count = NULL, public_blur = 'none' WHERE id = ?`).run(id);
    } finally {
      db.close();
    }

    // The upgraded portal checks faces (FACE_BLUR at its default): from its first answer on, a
    // visitor gets nothing of the item until its blurred copy exists.
    const after = await startTestPortal({}, dataDir);
    try {
      const visitorOf = () => new ApiClient(after.url);
      const client = new ApiClient(after.url);
      expect((await client.post('/api/user/login', { username: owner.user.username, password: owner.password })).status).toBe(200);
      const seen: (string | null)[] = [];
      const shown = await waitFor(
        async () => {
          const listed =
            ((await visitorOf().get('/api/evidence/public?limit=100')).data as WithFaces[]).find((item) => item.id === id) ?? null;
          seen.push(listed?.aws_url ?? null);
          const alone = await visitorOf().get(`/api/evidence/item/${id}`);
          if (alone.status === 200) seen.push(alone.data.aws_url);
          // The copy the public had before is never given again.
          expect((await visitorOf().bytes(taken.aws_url!)).status).toBe(404);
          return listed;
        },
        { timeoutMs: 60_000, intervalMs: 50, what: 'the older item back in the archive, blurred' },
      );
      expect(seen.filter(Boolean).every((url) => url!.includes('/blurred-display?'))).toBe(true);
      expect(await counter.inPicture((await visitorOf().bytes(shown.aws_url!)).body)).toBe(0);
      // Its owner keeps the picture as taken, and is told it was checked.
      const own = (await client.get(`/api/evidence/item/${id}`)).data as WithFaces;
      expect(own.faces).toEqual({ check: 'done', count: 3, consent: false, public_copy: 'blurred' });
      expect(own.aws_url).toBe(taken.aws_url);
      expect(await counter.inPicture((await client.bytes(own.aws_url!)).body)).toBe(3);
    } finally {
      await after.stop();
    }
  }, 150_000);
});
