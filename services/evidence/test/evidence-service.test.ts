import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MEDIA_TYPES, type MediaProcessedData } from '@portal/contracts';
import { HttpError, JobFailedForGoodError } from '@portal/platform';
import { waitFor } from '@portal/platform/testing';
import { faceCheckJobIdFor, jobIdFor } from '../src/domain/evidence-service.js';
import { publicCopyOf } from '../src/domain/evidence-record.js';
import {
  administrator,
  participant,
  photoBytes,
  startEmbeddedEvidence,
  wavBytes,
  type EmbeddedEvidence,
} from './support/embedded-evidence.js';
import { sampleEvidence } from './contracts/evidence-store-contracts.js';

// The evidence domain's rules, on the service as service.ts wires it over the embedded adapters
// (a SQLite file, the SQLite bus and job queue, the file blob store in a temporary folder).
let portal: EmbeddedEvidence;
beforeAll(async () => {
  portal = await startEmbeddedEvidence();
});
afterAll(() => portal?.close());

const service = () => portal.handle.evidence;
/** Notes of blob writes or deletions not settled yet (none once a use case has finished). */
const openIntents = () => portal.stores.evidence.blobIntents.olderThan(new Date(Date.now() + 60_000).toISOString(), 100);
const note = { title: 'A note', notes: 'seen at the market', location: null };

/** The HttpError a call is refused with (fails when it is not refused). */
async function refusal(call: Promise<unknown>): Promise<HttpError> {
  const error = await call.then(
    () => null,
    (thrown: unknown) => thrown,
  );
  expect(error, 'the call should have been refused').toBeInstanceOf(HttpError);
  return error as HttpError;
}

async function addPhoto(owner: ReturnType<typeof participant>, title = 'A photo') {
  const file = await portal.receivedFile('photo.jpg', await photoBytes());
  return service().createFromFile(owner, file, {
    title,
    notes: '',
    location: null,
  });
}

describe('who may add evidence', () => {
  it('refuses a participant who has not watched the onboarding video, and lets an administrator', async () => {
    const newcomer = participant('newcomer', { videoWatched: false });
    const refused = await refusal(service().createNote(newcomer, note));
    expect(refused.status).toBe(403);
    expect((await service().listOwn(newcomer, {}, 10)).items).toHaveLength(0);
    const { created } = await service().createNote(administrator('admin-notes'), note);
    expect(created).toBe(true);
  });
});

describe('idempotency: one capture makes one item, however often it is sent', () => {
  it('answers the first note for a second one with the same key, also when both arrive at once', async () => {
    const owner = participant('idem-notes');
    const [first, second] = await Promise.all([service().createNote(owner, note, 'key-1'), service().createNote(owner, note, 'key-1')]);
    expect([first.created, second.created].sort()).toEqual([false, true]);
    expect(first.record.id).toBe(second.record.id);
    const later = await service().createNote(owner, note, 'key-1');
    expect(later).toMatchObject({
      created: false,
      record: { id: first.record.id },
    });
    expect((await service().listOwn(owner, {}, 10)).items).toHaveLength(1);
  });

  it("keeps keys per participant: another participant's same key makes their own item", async () => {
    const [one, two] = [participant('idem-one'), participant('idem-two')];
    const mine = await service().createNote(one, note, 'shared-key');
    const theirs = await service().createNote(two, note, 'shared-key');
    expect(theirs.created).toBe(true);
    expect(theirs.record.id).not.toBe(mine.record.id);
    expect(theirs.record.user_id).toBe('idem-two');
  });

  it('files two uploads of the same capture finished at once as one item, and keeps no blob of the other', async () => {
    const owner = participant('idem-files');
    const files = [await portal.receivedFile('a.jpg', await photoBytes()), await portal.receivedFile('b.jpg', await photoBytes())];
    const records = await Promise.all(
      files.map((file) =>
        service().createFromFile(owner, file, { title: 'Twice', notes: '', location: null }, { idempotencyKey: 'capture-7' }),
      ),
    );
    expect(records[0]!.id).toBe(records[1]!.id);
    const items = (await service().listOwn(owner, {}, 10)).items;
    expect(items.map((item) => item.id)).toEqual([records[0]!.id]);
    const id = records[0]!.id;
    // Only the filed item's original is stored; the other upload's blobs went.
    const keys = (await portal.blobKeys()).filter((key) => !key.startsWith('evidence/' + id + '/'));
    const ofOthers = await Promise.all(
      keys.map(async (key) => ({
        key,
        owner: (await portal.stores.evidence.findById(key.split('/')[1]!))?.user_id,
      })),
    );
    expect(ofOthers.filter((blob) => blob.owner === undefined)).toEqual([]);
    expect(await openIntents()).toEqual([]);
    // The same upload id finished again answers the same item too.
    const again = await service().createFromFile(
      owner,
      await portal.receivedFile('c.jpg', await photoBytes()),
      { title: 'Twice', notes: '', location: null },
      { idempotencyKey: 'capture-7' },
    );
    expect(again.id).toBe(id);
  });
});

describe('edits', () => {
  it("takes a published item out of the archive when its owner edits it, back to the moderators' review", async () => {
    const owner = participant('editor');
    const { record } = await service().createNote(owner, note);
    const published = await service().toggleVisibility(administrator(), record.id);
    expect(published).toMatchObject({
      is_public: true,
      review_status: 'reviewed',
    });
    expect((await service().listPublic({}, 50)).items.map((item) => item.id)).toContain(record.id);

    const edited = await service().update(owner, record.id, { title: 'Changed', notes: 'more' }, undefined);
    expect(edited).toMatchObject({
      title: 'Changed',
      is_public: false,
      review_status: 'new',
    });
    expect((await service().listPublic({}, 50)).items.map((item) => item.id)).not.toContain(record.id);
    await expect(service().readable(undefined, record.id)).rejects.toMatchObject({ status: 404 });
  });

  it('keeps an item published when an administrator edits it, and records the edit in the audit log', async () => {
    const owner = participant('edited-by-admin');
    const { record } = await service().createNote(owner, note);
    await service().toggleVisibility(administrator(), record.id);
    const edited = await service().update(administrator(), record.id, { title: 'Typo fixed', notes: record.notes }, undefined);
    expect(edited).toMatchObject({
      title: 'Typo fixed',
      is_public: true,
      review_status: 'reviewed',
    });
    await waitFor(
      () => portal.events.find((event) => event.type === 'audit.recorded' && JSON.stringify(event.data).includes('Typo fixed')),
      {
        what: 'the audit entry of the edit',
      },
    ).then((event) =>
      expect(event.data).toMatchObject({
        action: 'evidence.edit',
        before: { title: 'A note' },
        after: { title: 'Typo fixed' },
      }),
    );
  });

  it("refuses another participant's edit and deletion, and hides a private item from them", async () => {
    const owner = participant('owner-1');
    const stranger = participant('stranger-1');
    const { record } = await service().createNote(owner, note);
    expect((await refusal(service().update(stranger, record.id, { title: 'Mine now', notes: '' }, undefined))).status).toBe(403);
    expect((await refusal(service().delete(stranger, record.id))).status).toBe(403);
    expect((await refusal(service().readable(stranger, record.id))).status).toBe(404);
    expect((await service().readable(owner, record.id)).title).toBe('A note');
    expect((await service().readable(administrator(), record.id)).title).toBe('A note');
  });
});

/** The worker's result of a photo at revision 1, ready (without a face check unless added). */
const readyPhoto = (id: string): MediaProcessedData => ({
  evidenceId: id,
  revision: 1,
  status: 'ready',
  error: null,
  media_type: MEDIA_TYPES.image,
  display: { key: `evidence/${id}/r1/display.webp`, contentType: 'image/webp' },
  thumbnail: null,
  poster: null,
  placeholder: null,
  width: 16,
  height: 16,
  duration: null,
});

describe('faces', () => {
  it('a first face check that could not be made is said to administrators; the public still gets nothing without consent', async () => {
    const owner = participant('unchecked');
    const item = await addPhoto(owner);
    await service().applyMediaResult(readyPhoto(item.id));
    expect(await portal.stores.evidence.findById(item.id)).toMatchObject({
      media_status: 'ready',
      face_check: 'pending',
      public_blur: 'pending',
    });
    await service().applyBlurred({
      evidenceId: item.id,
      revision: 1,
      version: 0,
      public: null,
      error: 'The faces could not be looked for: no copy',
    });
    const failed = await portal.stores.evidence.findById(item.id);
    expect(failed).toMatchObject({ face_check: 'failed', public_blur: 'pending' });
    expect(publicCopyOf(failed!)).toBe('pending');
    expect(publicCopyOf({ ...failed!, faces_consent: true })).toBe('plain');
  });
});

describe('items processed before faces were checked', () => {
  // Two at a time (FACE_CHECK_OLDER_AT_ONCE), on a service of its own: its queues hold these jobs alone.
  let older: EmbeddedEvidence;
  beforeAll(async () => {
    older = await startEmbeddedEvidence({ env: { FACE_CHECK_OLDER_AT_ONCE: '2' } });
  });
  afterAll(() => older?.close());

  /** An item as the release before faces were checked left it: ready, published, never checked. */
  async function fromBefore(media_type: 2 | 3, posted: number) {
    const id = randomUUID();
    const prefix = `evidence/${id}/r1/`;
    const item = sampleEvidence({
      id,
      media_type,
      is_public: true,
      review_status: 'reviewed',
      date_posted: new Date(Date.UTC(2025, 5, 1) + posted * 1000).toISOString(),
      media_status: 'ready',
      media_revision: 1,
      original_key: `${prefix}original`,
      display_key: `${prefix}display.${media_type === 2 ? 'webp' : 'mp4'}`,
      thumb_key: `${prefix}thumb.webp`,
      ...(media_type === 3 ? { poster_key: `${prefix}poster.webp` } : {}),
    });
    await older.stores.evidence.create(item, []);
    return item;
  }
  const job = (id: string, queue: 'stills' | 'transcode') => older.mediaQueues[queue].getJob(faceCheckJobIdFor(id, 1));
  const publicIds = async () => (await older.handle.evidence.listPublic({}, 100)).items.map((item) => item.id);

  it('hides them from the public at once, has them checked a few at a time, and shows each once its report is in', async () => {
    const photos = [await fromBefore(2, 1), await fromBefore(2, 2), await fromBefore(2, 3)];
    const video = await fromBefore(3, 4);
    expect((await publicIds()).sort()).toEqual([...photos, video].map((item) => item.id).sort());

    await older.handle.evidence.reconcile();
    // Every one hidden (their owner still has them), announced once so that cached archive pages go.
    expect(await publicIds()).toEqual([]);
    expect(await older.stores.evidence.findById(photos[2]!.id)).toMatchObject({ face_check: null, public_blur: 'pending' });
    await waitFor(() => older.events.find((event) => event.type === 'evidence.faces-changed'), { what: 'the announcement' });
    // The two oldest photos and the video are queued, each beside the work of its kind; the third photo waits its turn.
    expect(await job(photos[0]!.id, 'stills')).toMatchObject({
      state: 'waiting',
      data: { step: 'check-faces', originalKey: photos[0]!.original_key, displayKey: photos[0]!.display_key },
    });
    expect(await job(photos[1]!.id, 'stills')).not.toBeNull();
    expect(await job(photos[2]!.id, 'stills')).toBeNull();
    expect(await job(video.id, 'transcode')).toMatchObject({
      data: { step: 'check-faces', displayKey: video.display_key, posterKey: video.poster_key },
    });
    // A second pass adds nothing while these wait.
    await older.handle.evidence.reconcile();
    expect(await job(photos[2]!.id, 'stills')).toBeNull();
    expect((await older.mediaQueues.stills.counts()).waiting).toBe(2);

    // The first photo's report: three faces, its blurred copies. Shown blurred from then on.
    const prefix = `evidence/${photos[0]!.id}/r1/`;
    const report = {
      evidenceId: photos[0]!.id,
      revision: 1,
      version: 0,
      faces: { check: 'done' as const, key: `${prefix}faces.json`, count: 3 },
      public: {
        display: { key: `${prefix}blurred-v0-display.webp`, contentType: 'image/webp' },
        thumbnail: { key: `${prefix}blurred-v0-thumb.webp`, contentType: 'image/webp' },
        poster: null,
        placeholder: 'blurred',
      },
      error: null,
    };
    await older.handle.evidence.applyBlurred(report);
    expect(await older.stores.evidence.findById(photos[0]!.id)).toMatchObject({
      face_check: 'done',
      face_count: 3,
      faces_key: `${prefix}faces.json`,
      public_blur: 'ready',
      public_display_key: `${prefix}blurred-v0-display.webp`,
      public_placeholder: 'blurred',
    });
    expect(await publicIds()).toEqual([photos[0]!.id]);
    // The same report again (the reconciliation finding the finished job) changes nothing.
    const checked = await older.stores.evidence.findById(photos[0]!.id);
    await older.handle.evidence.applyBlurred({ ...report, faces: { ...report.faces, count: 1 } });
    expect(await older.stores.evidence.findById(photos[0]!.id)).toEqual(checked);
    // Its place goes to the next photo.
    await older.handle.evidence.reconcile();
    expect(await job(photos[2]!.id, 'stills')).toMatchObject({ state: 'waiting' });

    // Taken by a media worker of an earlier release (a rolling upgrade): processed as a new file,
    // its result no face check. Queued again, for a worker that knows the check.
    const earlier = await older.mediaQueues.stills.work(async (taken) => ({ evidenceId: taken.data.evidenceId, status: 'ready' }), {});
    await waitFor(async () => (await job(photos[2]!.id, 'stills'))?.state === 'completed', { what: 'the earlier worker to take the job' });
    await earlier.close();
    await older.handle.evidence.reconcile();
    expect(await job(photos[2]!.id, 'stills')).toBeNull();
    expect(await older.stores.evidence.findById(photos[2]!.id)).toMatchObject({ face_check: null, public_blur: 'pending' });
    await older.handle.evidence.reconcile();
    expect(await job(photos[2]!.id, 'stills')).toMatchObject({ state: 'waiting' });

    // A check that fails for good (three tries) says so to administrators, and the public still gets nothing.
    const worker = await older.mediaQueues.transcode.work(async () => {
      throw new JobFailedForGoodError('the detector could not start');
    });
    await waitFor(async () => (await job(video.id, 'transcode'))?.state === 'failed', { what: 'the video check to fail' });
    await worker.close();
    await older.handle.evidence.reconcile();
    expect(await older.stores.evidence.findById(video.id)).toMatchObject({ face_check: 'failed', public_blur: 'pending' });
    expect(await publicIds()).not.toContain(video.id);
  });

  it('takes the check of one still processing at the upgrade from its media result, as a new one', async () => {
    // Queued by the release before (MongoDB keeps its documents as they were: no face fields).
    const item = sampleEvidence({ media_type: 2, media_status: 'processing', media_revision: 1, original_key: 'evidence/p/r1/original' });
    await older.stores.evidence.create(item, []);
    await older.handle.evidence.applyMediaResult({ ...readyPhoto(item.id), faces: { check: 'done', key: null, count: 0 }, public: null });
    expect(await older.stores.evidence.findById(item.id)).toMatchObject({ face_check: 'done', face_count: 0, public_blur: 'none' });
    expect(await older.stores.evidence.findUncheckedPictures(2, 1000)).not.toContainEqual(expect.objectContaining({ id: item.id }));
  });

  it('leaves them as they are with FACE_BLUR=off, and counts them for the operator', async () => {
    const off = await startEmbeddedEvidence({ env: { FACE_BLUR: 'off' }, listen: true });
    try {
      const item = sampleEvidence({
        media_type: 2,
        is_public: true,
        media_status: 'ready',
        media_revision: 1,
        original_key: 'evidence/x/r1/original',
      });
      await off.stores.evidence.create(item, []);
      await off.handle.evidence.reconcile();
      expect(await off.stores.evidence.findById(item.id)).toMatchObject({ face_check: null, public_blur: 'none' });
      expect((await off.mediaQueues.stills.counts()).waiting).toBe(0);
      const metrics = await (await fetch(`${off.baseUrl}/metrics`)).text();
      expect(metrics).toMatch(/^portal_evidence_faces_unchecked\{kind="photo",service="evidence"\} 1$/m);
      expect(metrics).toMatch(/^portal_evidence_faces_unchecked\{kind="video",service="evidence"\} 0$/m);
    } finally {
      await off.close();
    }
  });
});

describe('replacing the file', () => {
  it('files the new photo as the next revision, queues its processing and removes the old revision', async () => {
    const owner = participant('replacer');
    const item = await addPhoto(owner);
    expect(item.media_revision).toBe(1);
    const old = item.original_key!;
    expect(await portal.blobs.stat(old)).not.toBeNull();

    const file = await portal.receivedFile('new.png', await photoBytes({ r: 0, g: 0, b: 255 }, 'png'));
    const updated = await service().update(owner, item.id, { title: 'Better photo', notes: '' }, file);
    expect(updated).toMatchObject({
      media_revision: 2,
      media_status: 'processing',
      original_type: 'image/png',
    });
    expect(updated.original_key).toBe(`evidence/${item.id}/r2/original`);
    expect(await portal.blobs.stat(updated.original_key!)).not.toBeNull();
    expect(await portal.blobs.stat(old)).toBeNull();
    expect((await portal.mediaQueues.stills.getJob(jobIdFor(item.id, 2)))?.data).toMatchObject({
      revision: 2,
      originalKey: updated.original_key,
    });
    expect(await openIntents()).toEqual([]);

    // The worker's late report on the replaced revision changes nothing, and its outputs go.
    await portal.blobs.put(`evidence/${item.id}/r1/display.webp`, Buffer.from('late'), { contentType: 'image/webp' });
    await service().applyMediaResult(readyPhoto(item.id));
    expect(await portal.stores.evidence.findById(item.id)).toMatchObject({
      media_revision: 2,
      media_status: 'processing',
      display_key: null,
    });
    expect(await portal.blobs.stat(`evidence/${item.id}/r1/display.webp`)).toBeNull();
  });

  it('refuses a file of another kind with a sentence, and keeps the item and its file as they were', async () => {
    const owner = participant('wrong-kind');
    const item = await addPhoto(owner);
    const refused = await refusal(
      service().update(owner, item.id, { title: 'Now a sound', notes: '' }, await portal.receivedFile('sound.wav', wavBytes())),
    );
    expect(refused.status).toBe(400);
    expect(refused.message).toBe('The new file must be a photo, like the one it replaces');
    expect(await portal.stores.evidence.findById(item.id)).toMatchObject({
      title: 'A photo',
      media_revision: 1,
      original_key: item.original_key,
    });
    expect(await portal.blobs.stat(item.original_key!)).not.toBeNull();
    expect((await portal.blobKeys()).filter((key) => key.startsWith(`evidence/${item.id}/r2/`))).toEqual([]);
  });

  it('lets only the participant who uploaded it replace the file (not an administrator), and a note has none', async () => {
    const owner = participant('only-owner');
    const item = await addPhoto(owner);
    const byAdmin = await refusal(
      service().update(administrator(), item.id, { title: 'x', notes: '' }, await portal.receivedFile('a.jpg', await photoBytes())),
    );
    expect(byAdmin.status).toBe(403);
    const { record } = await service().createNote(owner, note);
    const onNote = await refusal(
      service().update(owner, record.id, { title: 'x', notes: '' }, await portal.receivedFile('b.jpg', await photoBytes())),
    );
    expect(onNote).toMatchObject({
      status: 400,
      message: 'A note has no file to replace',
    });
    expect((await portal.stores.evidence.findById(item.id))?.media_revision).toBe(1);
  });

  it('refuses a photo over the limit for photos', async () => {
    const small = await startEmbeddedEvidence({ imageLimit: 64 });
    try {
      const refused = await refusal(
        small.handle.evidence.createFromFile(participant('big'), await small.receivedFile('big.jpg', await photoBytes()), {
          title: 'Big',
          notes: '',
          location: null,
        }),
      );
      expect(refused.status).toBe(413);
      expect(refused.message).toMatch(/^Photos can be at most/);
      expect(await small.blobKeys()).toEqual([]);
    } finally {
      await small.close();
    }
  });
});

describe('deleting', () => {
  it("removes the item and every blob of it, and the owner's deletion is not audited as an administrator's", async () => {
    const owner = participant('deleter');
    const item = await addPhoto(owner);
    await service().delete(owner, item.id);
    expect(await portal.stores.evidence.findById(item.id)).toBeNull();
    expect((await portal.blobKeys()).filter((key) => key.startsWith(`evidence/${item.id}/`))).toEqual([]);
    await waitFor(() => portal.events.find((event) => event.type === 'evidence.deleted' && event.key === item.id), {
      what: 'the deletion event',
    });
    expect(portal.events.some((event) => event.type === 'audit.recorded' && JSON.stringify(event.data).includes(item.id))).toBe(false);
  });
});
