import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { createEvent } from '@portal/platform';
import { NO_MEDIA, type EvidenceRecord } from '../../src/domain/evidence-record.js';
import type { AuthorDirectory } from '../../src/repositories/author-directory.js';
import type { EvidenceRepository } from '../../src/repositories/evidence-repository.js';
import { searchWords } from '../../src/domain/search-words.js';

export function sampleEvidence(overrides: Partial<EvidenceRecord> = {}): EvidenceRecord {
  const now = new Date().toISOString();
  return {
    id: randomUUID(),
    user_id: randomUUID(),
    username: 'someone',
    avatar_url: null,
    title: 'Supporting Evidence',
    notes: '',
    location: null,
    media_type: 1,
    is_public: false,
    review_status: 'new',
    date_posted: now,
    updated_at: now,
    media_status: 'none',
    media_error: null,
    media_revision: 0,
    ...NO_MEDIA,
    ...overrides,
  };
}

const event = (key: string, type = 'evidence.updated') => ({
  topic: 'evidence.items',
  event: createEvent({ type, key, data: { evidenceId: key } }),
});

/** The contract of the evidence repository, for every adapter (SQLite, MongoDB). */
export function evidenceRepositoryContract(name: string, create: () => Promise<EvidenceRepository>): void {
  describe(`EvidenceRepository contract: ${name}`, () => {
    it('stores and finds an item exactly as given', async () => {
      const repo = await create();
      const item = sampleEvidence({
        media_type: 3,
        media_status: 'processing',
        media_revision: 1,
        original_key: 'evidence/x/r1/original',
        location: '1, 2',
        duration: null,
      });
      await repo.create(item, [event(item.id, 'evidence.created')]);
      expect(await repo.findById(item.id)).toEqual(item);
      expect(await repo.findById(randomUUID())).toBeNull();
    });

    it('updates, and deletes once, answering what was deleted', async () => {
      const repo = await create();
      const item = sampleEvidence();
      await repo.create(item, []);
      expect(await repo.update(item.id, { title: 'Renamed', is_public: true }, [event(item.id)])).toEqual({
        ...item,
        title: 'Renamed',
        is_public: true,
      });
      expect(await repo.update(randomUUID(), { title: 'x' }, [])).toBeNull();
      expect((await repo.delete(item.id, [event(item.id, 'evidence.deleted')]))?.id).toBe(item.id);
      expect(await repo.delete(item.id, [])).toBeNull();
    });

    it('lists newest first, a page at a time, by owner, by type, and publicly only what is public and ready', async () => {
      const repo = await create();
      const owner = randomUUID();
      const base = Date.parse('2030-01-01T00:00:00Z') + Math.floor(Math.random() * 1e9);
      const at = (i: number) => new Date(base + i * 1000).toISOString();
      const items = [
        sampleEvidence({ user_id: owner, date_posted: at(1), media_type: 1, is_public: true }),
        sampleEvidence({ user_id: owner, date_posted: at(2), media_type: 2, is_public: true, media_status: 'ready' }),
        sampleEvidence({ user_id: owner, date_posted: at(3), media_type: 2, is_public: true, media_status: 'processing' }),
        sampleEvidence({ user_id: owner, date_posted: at(4), media_type: 3, is_public: false, media_status: 'ready' }),
        sampleEvidence({ user_id: owner, date_posted: at(5), media_type: 4, is_public: true, media_status: 'failed' }),
      ];
      for (const item of items) await repo.create(item, []);

      const pages: string[] = [];
      let cursor: string | undefined;
      do {
        const page = await repo.list({ ownerId: owner }, 2, cursor);
        pages.push(...page.items.map((item) => item.id));
        cursor = page.nextCursor ?? undefined;
      } while (cursor);
      expect(pages).toEqual([...items].reverse().map((item) => item.id));

      expect((await repo.list({ ownerId: owner, type: 2 }, 10)).items.map((item) => item.id)).toEqual([items[2]!.id, items[1]!.id]);
      const open = (await repo.list({ publicOnly: true }, 100)).items.filter((item) => item.user_id === owner);
      expect(open.map((item) => item.id)).toEqual([items[1]!.id, items[0]!.id]);
    });

    it('changes the visibility of every item at once and answers how many changed', async () => {
      const repo = await create();
      await repo.create(sampleEvidence({ is_public: false }), []);
      await repo.setAllVisibility(true, () => []);
      expect(await repo.setAllVisibility(true, () => [])).toBe(0);
      const changed = await repo.setAllVisibility(false, (count) => [
        {
          ...event('all', 'evidence.visibility-changed'),
          event: createEvent({ type: 'evidence.visibility-changed', key: 'all', data: { changed: count } }),
        },
      ]);
      expect(changed).toBeGreaterThanOrEqual(1);
      expect((await repo.list({ publicOnly: true }, 100)).items).toEqual([]);
    });

    it('marks every item reviewed when all are made public or private at once', async () => {
      const repo = await create();
      const waiting = sampleEvidence({ is_public: false, review_status: 'new' });
      await repo.create(waiting, []);
      await repo.setAllVisibility(false, () => []);
      expect(await repo.findById(waiting.id)).toMatchObject({ is_public: false, review_status: 'reviewed' });
      expect((await repo.counts()).new).toBe(0);
    });

    it('filters by review state and visibility, and counts new, public and private items', async () => {
      const repo = await create();
      await repo.setAllVisibility(false, () => []);
      const owner = randomUUID();
      const fresh = sampleEvidence({ user_id: owner, review_status: 'new' });
      const published = sampleEvidence({ user_id: owner, review_status: 'reviewed', is_public: true });
      const kept = sampleEvidence({ user_id: owner, review_status: 'reviewed', is_public: false });
      for (const item of [fresh, published, kept]) await repo.create(item, []);
      const listed = async (filter: Parameters<EvidenceRepository['list']>[0]) =>
        (await repo.list({ ownerId: owner, ...filter }, 100)).items.map((item) => item.id).sort();
      expect(await listed({ reviewStatus: 'new' })).toEqual([fresh.id]);
      expect(await listed({ reviewStatus: 'reviewed' })).toEqual([published.id, kept.id].sort());
      expect(await listed({ isPublic: true })).toEqual([published.id]);
      expect(await listed({ isPublic: false })).toEqual([fresh.id, kept.id].sort());
      const counts = await repo.counts();
      expect(counts.new).toBe(1);
      expect(counts.public).toBe(1);
      expect(counts.private).toBe(counts.total - 1);
    });

    it('publishes and unpublishes selected items one by one, with one event each, and reports unknown ids', async () => {
      const repo = await create();
      for (const entry of await repo.outbox.pending(10_000)) await repo.outbox.markPublished([entry.id]);
      const a = sampleEvidence({ is_public: false });
      const b = sampleEvidence({ is_public: true, review_status: 'new' });
      const c = sampleEvidence({ is_public: false });
      for (const item of [a, b, c]) await repo.create(item, []);
      const unknown = randomUUID();
      const result = await repo.setVisibility([a.id, b.id, unknown], true, (record) => [event(record.id, 'evidence.visibility-changed')]);
      expect(result.changed.map((record) => record.id)).toEqual([a.id]);
      expect(result.changed[0]).toMatchObject({ is_public: true, review_status: 'reviewed' });
      expect(result.unchanged).toEqual([b.id]);
      expect(result.missing).toEqual([unknown]);
      expect(await repo.findById(a.id)).toMatchObject({ is_public: true, review_status: 'reviewed' });
      // Left as it was: the service marks it reviewed, with its own event (EvidenceService.setSelectedVisibility).
      expect(await repo.findById(b.id)).toMatchObject({ is_public: true, review_status: 'new' });
      expect(await repo.findById(c.id)).toMatchObject({ is_public: false, review_status: 'new' });
      const announced = (await repo.outbox.pending(100)).map((entry) => entry.event.key);
      expect(announced).toEqual([a.id]);
      const back = await repo.setVisibility([a.id], false, (record) => [event(record.id, 'evidence.visibility-changed')]);
      expect(back.changed.map((record) => record.is_public)).toEqual([false]);
    });

    it('marks selected items reviewed, announcing only those that were new', async () => {
      const repo = await create();
      for (const entry of await repo.outbox.pending(10_000)) await repo.outbox.markPublished([entry.id]);
      const fresh = sampleEvidence({ review_status: 'new' });
      const done = sampleEvidence({ review_status: 'reviewed' });
      for (const item of [fresh, done]) await repo.create(item, []);
      const unknown = randomUUID();
      const result = await repo.markReviewed([fresh.id, done.id, unknown], (record) => [event(record.id, 'evidence.reviewed')]);
      expect(result.changed.map((record) => [record.id, record.review_status, record.is_public])).toEqual([[fresh.id, 'reviewed', false]]);
      expect(result.unchanged).toEqual([done.id]);
      expect(result.missing).toEqual([unknown]);
      expect((await repo.outbox.pending(100)).map((entry) => entry.event.type)).toEqual(['evidence.reviewed']);
    });

    it('finds items by the words of their title and notes: prefixes, any case and accents, every word', async () => {
      const repo = await create();
      const owner = randomUUID();
      const cafe = sampleEvidence({ user_id: owner, title: 'Noise at the Café-Bar', notes: 'Loud music after midnight, 2 speakers' });
      const bridge = sampleEvidence({ user_id: owner, title: 'Bridge', notes: 'Graffiti on the north pillar' });
      const music = sampleEvidence({ user_id: owner, title: 'MUSIC stage', notes: '' });
      for (const item of [cafe, bridge, music]) await repo.create(item, []);
      // The service hands the repository the words of what was typed (searchWords).
      const found = async (q: string) =>
        (await repo.list({ ownerId: owner, words: searchWords(q) }, 100)).items.map((item) => item.id).sort();
      expect(await found('cafe')).toEqual([cafe.id]);
      expect(await found('CAFÉ')).toEqual([cafe.id]);
      expect(await found('mus')).toEqual([cafe.id, music.id].sort());
      expect(await found('music midnight')).toEqual([cafe.id]);
      expect(await found('"music", (midnight)!')).toEqual([cafe.id]);
      expect(await found('graffiti midnight')).toEqual([]);
      expect(await found('Pillar')).toEqual([bridge.id]);
      expect(await found('2')).toEqual([cafe.id]);
      expect(await found('illar')).toEqual([]);
      expect(await found('')).toEqual([cafe.id, bridge.id, music.id].sort());
      expect((await repo.list({ ownerId: owner, words: ['.*'] }, 100)).items).toEqual([]);
      expect((await repo.list({ ownerId: owner, words: ['"'] }, 100)).items).toEqual([]);
      // Edits change what is found; deleted items are not found.
      await repo.update(bridge.id, { title: 'Tunnel', notes: 'Stencils' }, []);
      expect(await found('bridge')).toEqual([]);
      expect(await found('stencil')).toEqual([bridge.id]);
      await repo.update(bridge.id, { notes: 'Murals' }, []);
      expect(await found('tunnel murals')).toEqual([bridge.id]);
      await repo.delete(cafe.id, []);
      expect(await found('cafe')).toEqual([]);
      // With the other filters and a page at a time.
      const base = Date.parse('2031-01-01T00:00:00Z') + Math.floor(Math.random() * 1e9);
      const many = Array.from({ length: 5 }, (_, i) =>
        sampleEvidence({
          user_id: owner,
          title: `Lantern ${i}`,
          date_posted: new Date(base + i * 1000).toISOString(),
          is_public: i % 2 === 0,
        }),
      );
      for (const item of many) await repo.create(item, []);
      const pages: string[] = [];
      let cursor: string | undefined;
      do {
        const page = await repo.list({ ownerId: owner, words: ['lantern'], isPublic: true }, 1, cursor);
        pages.push(...page.items.map((item) => item.id));
        cursor = page.nextCursor ?? undefined;
      } while (cursor);
      expect(pages).toEqual([many[4]!.id, many[2]!.id, many[0]!.id]);
    });

    it('applies a media result only to the revision it belongs to', async () => {
      const repo = await create();
      const item = sampleEvidence({ media_type: 2, media_status: 'processing', media_revision: 2 });
      await repo.create(item, []);
      expect(await repo.applyMediaResult(item.id, 1, { media_status: 'ready' })).toBeNull();
      expect((await repo.findById(item.id))?.media_status).toBe('processing');
      const ready = await repo.applyMediaResult(item.id, 2, { media_status: 'ready', display_key: 'k', width: 10, height: 20 });
      expect(ready).toMatchObject({ media_status: 'ready', display_key: 'k', width: 10, height: 20 });
      expect((await repo.findProcessing(1000)).some((entry) => entry.id === item.id)).toBe(false);
    });

    it("applies a video's first (remuxed) copy only while no later copy has replaced it", async () => {
      const repo = await create();
      const item = sampleEvidence({ media_type: 3, media_status: 'processing', media_revision: 1 });
      await repo.create(item, []);
      const first = { media_status: 'ready' as const, display_key: 'r1/display-remuxed.mp4', width: 1080, height: 1920 };
      expect(await repo.applyMediaResult(item.id, 1, first, [null, first.display_key])).toMatchObject(first);
      // The same result again (a redelivery) applies again: nothing changes.
      expect(await repo.applyMediaResult(item.id, 1, first, [null, first.display_key])).toMatchObject(first);
      const swapped = await repo.applyMediaResult(item.id, 1, { display_key: 'r1/display.mp4', width: 720, height: 1280 });
      expect(swapped).toMatchObject({ display_key: 'r1/display.mp4', width: 720 });
      // The first copy's result arriving late (its job ran again) does not undo the swap.
      expect(await repo.applyMediaResult(item.id, 1, first, [null, first.display_key])).toBeNull();
      expect(await repo.findById(item.id)).toMatchObject({ display_key: 'r1/display.mp4', width: 720, height: 1280 });
    });

    it('keeps the faces of an item: public only once its public copy is made (or consent is on record), changes guarded by their version', async () => {
      const repo = await create();
      const tag = `faces${randomUUID().slice(0, 8)}`;
      const item = sampleEvidence({
        title: tag,
        media_type: 2,
        media_status: 'ready',
        media_revision: 1,
        is_public: true,
        face_check: 'pending',
        public_blur: 'pending',
      });
      await repo.create(item, []);
      const shown = async () => (await repo.list({ publicOnly: true, words: [tag] }, 10)).items.map((entry) => entry.id);
      expect(await shown()).toEqual([]);
      // The check's result: a face, its blurred copies.
      const checked = await repo.applyMediaResult(item.id, 1, {
        face_check: 'done',
        face_count: 1,
        faces_key: 'r1/faces.json',
        public_blur: 'ready',
        public_display_key: 'r1/blurred-v0-display.webp',
        public_placeholder: 'hash',
      });
      expect(checked).toMatchObject({ face_check: 'done', face_count: 1, faces_version: 0, faces_consent: false, public_blur: 'ready' });
      expect(await shown()).toEqual([item.id]);
      // An administrator's change, on version 0: another version is refused.
      expect(await repo.update(item.id, { faces_version: 2, public_blur: 'pending' }, [], { facesVersion: 1 })).toBeNull();
      const edited = await repo.update(item.id, { faces_version: 1, public_blur: 'pending', face_count: 2 }, [event(item.id)], {
        facesVersion: 0,
      });
      expect(edited).toMatchObject({ faces_version: 1, public_blur: 'pending', face_count: 2 });
      expect(await shown()).toEqual([]);
      expect((await repo.findBlurPending(1000)).map((entry) => entry.id)).toContain(item.id);
      // Public copies made for an older version are not taken; those for the current one are.
      expect(await repo.applyMediaResult(item.id, 1, { public_blur: 'ready' }, undefined, 0)).toBeNull();
      expect(
        await repo.applyMediaResult(item.id, 1, { public_blur: 'ready', public_display_key: 'r1/blurred-v1-display.webp' }, undefined, 1),
      ).toMatchObject({
        public_blur: 'ready',
        public_display_key: 'r1/blurred-v1-display.webp',
      });
      expect((await repo.findBlurPending(1000)).map((entry) => entry.id)).not.toContain(item.id);
      // Consent on record shows the item even while a copy is remade.
      await repo.update(item.id, { public_blur: 'pending', faces_version: 2 }, [], { facesVersion: 1 });
      expect(await shown()).toEqual([]);
      expect(await repo.update(item.id, { faces_consent: true }, [], { facesVersion: 2 })).toMatchObject({ faces_consent: true });
      expect(await shown()).toEqual([item.id]);
    });

    it('hides the photos and videos processed before faces were checked, once, and finds the ready ones oldest first', async () => {
      const repo = await create();
      // Older than anything else in the store, a second apart: the oldest first.
      const base = Date.parse('1990-01-01T00:00:00Z') + Math.floor(Math.random() * 1e9);
      const at = (i: number) => new Date(base + i * 1000).toISOString();
      // As the release before faces were checked left them (NO_MEDIA: face_check null, public_blur none).
      const older = (i: number, overrides: Partial<EvidenceRecord>) =>
        sampleEvidence({ date_posted: at(i), media_status: 'ready', media_revision: 1, is_public: true, ...overrides });
      const photos = [older(2, { media_type: 2 }), older(1, { media_type: 2 })];
      const video = older(3, { media_type: 3 });
      const processing = older(4, { media_type: 2, media_status: 'processing' });
      const note = older(5, { media_type: 1, media_status: 'none' });
      const recording = older(6, { media_type: 4 });
      const checked = older(7, { media_type: 2, face_check: 'done', face_count: 0 });
      const off = older(8, { media_type: 3, face_check: 'off' });
      const all = [...photos, video, processing, note, recording, checked, off];
      for (const item of all) await repo.create(item, []);
      for (const entry of await repo.outbox.pending(10_000)) await repo.outbox.markPublished([entry.id]);
      const mine = (record: EvidenceRecord) => all.some((item) => item.id === record.id);

      const counted = { photos: await repo.countUncheckedPictures(2), videos: await repo.countUncheckedPictures(3) };
      expect(counted.photos).toBeGreaterThanOrEqual(3);
      expect(counted.videos).toBeGreaterThanOrEqual(1);
      const held = await repo.holdUncheckedPictures((count) => [
        { topic: 'evidence.items', event: createEvent({ type: 'evidence.faces-changed', key: 'all', data: { held: count } }) },
      ]);
      // Every photo and video never checked, whatever its media's state; nothing else.
      expect(held).toBeGreaterThanOrEqual(4);
      for (const item of [...photos, video, processing]) expect((await repo.findById(item.id))?.public_blur).toBe('pending');
      for (const item of [note, recording, checked, off]) expect((await repo.findById(item.id))?.public_blur).toBe('none');
      expect((await repo.findById(video.id))?.face_check).toBeNull();
      const announced = (await repo.outbox.pending(100)).filter((entry) => entry.event.type === 'evidence.faces-changed');
      expect(announced.map((entry) => entry.event.data)).toEqual([{ held }]);
      // Hidden from the public meanwhile (the rest is shown as it was); hidden already, they are not
      // held (nor announced) again.
      const shown = async () => (await repo.list({ publicOnly: true }, 1000)).items.filter(mine).map((entry) => entry.id);
      expect((await shown()).sort()).toEqual([note.id, recording.id, checked.id, off.id].sort());
      await repo.outbox.markPublished(announced.map((entry) => entry.id));
      expect(await repo.holdUncheckedPictures(() => [])).toBe(0);
      expect(await repo.outbox.pending(100)).toEqual([]);

      // The ready ones of a type, oldest first; the limit is kept.
      const unchecked = async (type: 2 | 3) => (await repo.findUncheckedPictures(type, 1000)).filter(mine).map((entry) => entry.id);
      expect(await unchecked(2)).toEqual([photos[1]!.id, photos[0]!.id]);
      expect(await unchecked(3)).toEqual([video.id]);
      expect(await repo.findUncheckedPictures(2, 1)).toHaveLength(1);
      // Once checked (its report applied), an item is no longer found.
      await repo.applyMediaResult(photos[1]!.id, 1, { face_check: 'done', face_count: 0, public_blur: 'none' }, undefined, 0);
      expect(await unchecked(2)).toEqual([photos[0]!.id]);
      expect(await repo.countUncheckedPictures(2)).toBe(counted.photos - 1);
      expect(await shown()).toContain(photos[1]!.id);
      expect(await shown()).not.toContain(photos[0]!.id);
    });

    it("updates an author's name and avatar on all their items, and deletes all their items", async () => {
      const repo = await create();
      const owner = randomUUID();
      const mine = [sampleEvidence({ user_id: owner }), sampleEvidence({ user_id: owner })];
      const other = sampleEvidence();
      for (const item of [...mine, other]) await repo.create(item, []);
      expect(await repo.updateAuthor(owner, 'renamed', '/api/user/x/avatar?v=1')).toBe(2);
      expect(await repo.findById(mine[0]!.id)).toMatchObject({ username: 'renamed', avatar_url: '/api/user/x/avatar?v=1' });
      expect((await repo.findById(other.id))?.username).toBe('someone');
      const deleted = await repo.deleteByOwner(owner, (records) => records.map((record) => event(record.id, 'evidence.deleted')));
      expect(deleted.map((record) => record.id).sort()).toEqual(mine.map((item) => item.id).sort());
      expect(await repo.deleteByOwner(owner, () => [])).toEqual([]);
      expect(await repo.findById(other.id)).not.toBeNull();
    });

    it('remembers which upload became which item', async () => {
      const repo = await create();
      const item = sampleEvidence({ media_type: 2 });
      const uploadId = randomUUID().replace(/-/g, '');
      await repo.create(item, [], { uploadId, evidenceId: item.id, size: 1234 });
      expect(await repo.findFinishedUpload(uploadId)).toEqual({ uploadId, evidenceId: item.id, size: 1234 });
      expect(await repo.findFinishedUpload('unknown')).toBeNull();
    });

    it('keeps an idempotency key per owner: finds the item made with it, refuses a second, forgets it with the item', async () => {
      const repo = await create();
      const owner = randomUUID();
      const key = `k-${randomUUID()}`;
      const first = sampleEvidence({ user_id: owner });
      await repo.create(first, [event(first.id, 'evidence.created')], undefined, key);
      expect(await repo.findByIdempotencyKey(owner, key)).toEqual(first);
      expect(await repo.findByIdempotencyKey(randomUUID(), key)).toBeNull();
      const second = sampleEvidence({ user_id: owner });
      await expect(repo.create(second, [event(second.id, 'evidence.created')], undefined, key)).rejects.toThrow();
      expect(await repo.findById(second.id)).toBeNull();
      // Another owner may use the same key.
      const theirs = sampleEvidence();
      await repo.create(theirs, [event(theirs.id, 'evidence.created')], undefined, key);
      expect(await repo.findByIdempotencyKey(theirs.user_id, key)).toEqual(theirs);
      await repo.delete(first.id, [event(first.id, 'evidence.deleted')]);
      expect(await repo.findByIdempotencyKey(owner, key)).toBeNull();
      const again = sampleEvidence({ user_id: owner });
      await repo.create(again, [event(again.id, 'evidence.created')], undefined, key);
      expect(await repo.findByIdempotencyKey(owner, key)).toEqual(again);
    });

    it('keeps the events of each change in the outbox until published', async () => {
      const repo = await create();
      for (const entry of await repo.outbox.pending(10_000)) await repo.outbox.markPublished([entry.id]);
      const item = sampleEvidence();
      await repo.create(item, [event(item.id, 'evidence.created')]);
      await repo.update(item.id, { notes: 'n' }, [event(item.id, 'evidence.updated')]);
      await repo.delete(item.id, [event(item.id, 'evidence.deleted')]);
      const types = (await repo.outbox.pending(100)).filter((entry) => entry.event.key === item.id).map((entry) => entry.event.type);
      expect(types).toEqual(['evidence.created', 'evidence.updated', 'evidence.deleted']);
    });
  });
}

/** The contract of the author directory (SQLite, MongoDB). */
export function authorDirectoryContract(name: string, create: () => Promise<AuthorDirectory>): void {
  describe(`AuthorDirectory contract: ${name}`, () => {
    it('keeps the latest name and avatar of each author, and forgets a removed one', async () => {
      const authors = await create();
      const userId = randomUUID();
      expect(await authors.find(userId)).toBeNull();
      await authors.upsert({ userId, username: 'first', avatarUrl: null });
      await authors.upsert({ userId, username: 'second', avatarUrl: '/a' });
      expect(await authors.find(userId)).toEqual({ userId, username: 'second', avatarUrl: '/a' });
      await authors.remove(userId);
      expect(await authors.find(userId)).toBeNull();
    });
  });
}
