import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { waitFor } from '@portal/platform/testing';
import { ApiClient } from '../support/api-client.js';
import { adminClient, newParticipant, publishedEvents } from '../support/accounts.js';
import { uploadEvidence, waitForMedia } from '../support/evidence.js';
import { phoneJpeg } from '../support/media.js';
import { startTestPortal, type TestPortal } from '../support/portal.js';

let portal: TestPortal;
let scratch: string;
let admin: ApiClient;
const embedded = process.env.PORTAL_TEST_MODE !== 'distributed';

beforeAll(async () => {
  scratch = mkdtempSync(join(tmpdir(), 'evidence-moderation-'));
  portal = await startTestPortal({ PUBLIC_LOCATION_DECIMALS: '3' });
  admin = (await adminClient(portal.url)).client;
}, 120_000);
afterAll(async () => {
  await portal.dispose();
  rmSync(scratch, { recursive: true, force: true });
});

/** A unique word, so that each test finds only its own items. */
const tagWord = () => `tag${randomUUID().replaceAll('-', '').slice(0, 10)}`;

const publicIds = async (query = '') => {
  const response = await new ApiClient(portal.url).get(`/api/evidence/public?limit=100${query}`);
  expect(response.status).toBe(200);
  return (response.data as { id: string }[]).map((item) => item.id);
};

describe("an owner's edit of a published item (issue 10.3)", () => {
  it('takes the item out of the archive and back into the review queue until an administrator publishes it again', async () => {
    const { client } = await newParticipant(portal.url);
    const tag = tagWord();
    const note = await client.post('/api/evidence', { title: `Approved ${tag}`, notes: 'as reviewed' });
    expect(note.data.review_status).toBe('new');
    const published = await admin.put('/api/evidence/visibility', { ids: [note.data.id], is_public: true });
    expect(published.data.changed).toEqual([note.data.id]);
    expect(await publicIds(`&q=${tag}`)).toEqual([note.data.id]);

    const edited = await client.put(`/api/evidence/update/${note.data.id}`, { title: `Rewritten ${tag}`, notes: 'something else' });
    expect(edited.status).toBe(200);
    expect(edited.data).toMatchObject({ is_public: false, review_status: 'new', title: `Rewritten ${tag}` });
    expect(await publicIds(`&q=${tag}`)).toEqual([]);
    expect((await new ApiClient(portal.url).get(`/api/evidence/item/${note.data.id}`)).status).toBe(404);
    const queue = await admin.get(`/api/evidence/admin?review_status=new&q=${tag}`);
    expect(queue.data.map((item: { id: string }) => item.id)).toEqual([note.data.id]);

    await admin.put('/api/evidence/visibility', { ids: [note.data.id], is_public: true });
    const archive = await new ApiClient(portal.url).get(`/api/evidence/public?q=${tag}`);
    expect(archive.data).toMatchObject([{ id: note.data.id, title: `Rewritten ${tag}`, review_status: 'reviewed' }]);
  });

  it('takes a published photo out of the archive when its owner replaces the file', async () => {
    const { client } = await newParticipant(portal.url);
    const photo = join(scratch, `${randomUUID()}.jpg`);
    writeFileSync(photo, await phoneJpeg({ width: 320, height: 240 }));
    const created = await uploadEvidence(client, photo, { title: 'Replaced later' });
    expect(created.status).toBe(201);
    await waitForMedia(client, created.data.id);
    await admin.put(`/api/evidence/clearance/${created.data.id}`);
    expect(await publicIds()).toContain(created.data.id);

    const form = new FormData();
    form.append('title', 'Replaced later');
    form.append('notes', '');
    form.append('file', new Blob([new Uint8Array(await phoneJpeg({ width: 200, height: 200 }))], { type: 'image/jpeg' }), 'new.jpg');
    const replaced = await client.putForm(`/api/evidence/update/${created.data.id}`, form);
    expect(replaced.status).toBe(200);
    expect(replaced.data).toMatchObject({ is_public: false, review_status: 'new' });
    await waitForMedia(client, created.data.id);
    expect(await publicIds()).not.toContain(created.data.id);
  });

  it("leaves an administrator's own edit of a public item public", async () => {
    const { client } = await newParticipant(portal.url);
    const note = await client.post('/api/evidence', { title: 'Typo in title', notes: '' });
    await admin.put(`/api/evidence/clearance/${note.data.id}`);
    const fixed = await admin.put(`/api/evidence/update/${note.data.id}`, { title: 'Fixed title', notes: '' });
    expect(fixed.data).toMatchObject({ is_public: true, review_status: 'reviewed' });
  });
});

describe("an owner's avatar beside a published item (issue 21.1)", () => {
  // The decision of docs/SECURITY.md: public answers carry no avatar, and an avatar is served to
  // its owner and administrators only, so a picture no moderator saw never reaches the archive.
  it('never reaches the archive: no avatar in public answers, and the avatar URL is not served to visitors or other participants', async () => {
    const owner = await newParticipant(portal.url);
    const setAvatar = async (colour: string) => {
      const form = new FormData();
      for (const [name, value] of Object.entries({ email: owner.user.email, phone_number: '5551234567', pronouns: '' }))
        form.append(name, value);
      form.append(
        'avatar',
        new Blob([new Uint8Array(await phoneJpeg({ width: 96, height: 96 }))], { type: 'image/jpeg' }),
        `${colour}.jpg`,
      );
      const profile = await owner.client.putForm('/api/evidence/user', form);
      expect(profile.status).toBe(200);
      return profile.data.avatar_AWS_URL as string;
    };
    await setAvatar('first');
    const note = await owner.client.post('/api/evidence', { title: 'Harmless', notes: '' });
    expect((await admin.put(`/api/evidence/clearance/${note.data.id}`)).status).toBe(200);

    // After publication the owner swaps the picture.
    const swapped = await setAvatar('swapped');
    await waitFor(async () => (await owner.client.get(`/api/evidence/item/${note.data.id}`)).data.avatar_AWS_URL === swapped, {
      what: "the new avatar on the owner's copy of the item",
    });

    const visitor = new ApiClient(portal.url);
    const archived = ((await visitor.get('/api/evidence/public?limit=100')).data as { id: string; avatar_AWS_URL: string | null }[]).find(
      (item) => item.id === note.data.id,
    );
    expect(archived).toMatchObject({ avatar_AWS_URL: null });
    expect((await visitor.get(`/api/evidence/item/${note.data.id}`)).data.avatar_AWS_URL).toBeNull();
    const other = await newParticipant(portal.url);
    expect((await other.client.get(`/api/evidence/item/${note.data.id}`)).data.avatar_AWS_URL).toBeNull();

    // The picture itself, by its versioned URL or without a version.
    for (const url of [swapped, `/api/user/${owner.user.id}/avatar`]) {
      expect((await visitor.bytes(url)).status, url).toBe(401);
      expect((await other.client.bytes(url)).status, url).toBe(403);
      for (const privileged of [owner.client, admin]) {
        const served = await privileged.bytes(url);
        expect(served.status, url).toBe(200);
        expect(served.headers.get('cache-control')).toBe('private, no-store');
      }
    }
  });
});

describe("a participant's device position in public answers (issue 10.8)", () => {
  it('is coarsened to PUBLIC_LOCATION_DECIMALS for the public and exact for the owner and administrators; free text is untouched', async () => {
    const { client } = await newParticipant(portal.url);
    const tag = tagWord();
    const exact = '40.71283, -74.00609 (±15 m)';
    const measured = await client.post('/api/evidence', { title: `Measured ${tag}`, notes: '', location: exact });
    const written = await client.post('/api/evidence', { title: `Described ${tag}`, notes: '', location: 'By the north gate, 12.34567' });
    await admin.put('/api/evidence/visibility', { ids: [measured.data.id, written.data.id], is_public: true });

    const visitor = new ApiClient(portal.url);
    const archive = await visitor.get(`/api/evidence/public?q=${tag}`);
    const locations = Object.fromEntries(archive.data.map((item: { id: string; location: string }) => [item.id, item.location]));
    expect(locations[measured.data.id]).toBe('40.713, -74.006 (±111 m)');
    expect(locations[written.data.id]).toBe('By the north gate, 12.34567');
    const item = await visitor.get(`/api/evidence/item/${measured.data.id}`);
    expect(item.data.location).toBe('40.713, -74.006 (±111 m)');
    expect(item.headers.get('cache-control')).toBe('public, max-age=30');
    expect(item.headers.get('vary')).toBe('Cookie');
    // A participant who is not the owner is the public too.
    const stranger = (await newParticipant(portal.url)).client;
    expect((await stranger.get(`/api/evidence/item/${measured.data.id}`)).data.location).toBe('40.713, -74.006 (±111 m)');

    // Asked again by its owner while the public's copy would still be fresh in a cache.
    expect((await visitor.get(`/api/evidence/item/${measured.data.id}`)).data.location).toBe('40.713, -74.006 (±111 m)');
    const own = await client.get(`/api/evidence/item/${measured.data.id}`);
    expect(own.data.location).toBe(exact);
    expect(own.headers.get('cache-control')).toBe('private, no-store');
    expect((await client.get('/api/evidence')).data.find((entry: { id: string }) => entry.id === measured.data.id).location).toBe(exact);
    expect((await admin.get(`/api/evidence/item/${measured.data.id}`)).data.location).toBe(exact);
    expect((await admin.get(`/api/evidence/admin?q=${tag}`)).data.map((entry: { location: string }) => entry.location)).toContain(exact);
  });
});

describe('the review queue', () => {
  it('holds new items until an administrator publishes, unpublishes or marks them reviewed, with counts', async () => {
    const { client } = await newParticipant(portal.url);
    const tag = tagWord();
    const made = [];
    for (const name of ['one', 'two', 'three', 'four'])
      made.push((await client.post('/api/evidence', { title: `${name} ${tag}`, notes: '' })).data.id as string);
    const [one, two, three, four] = made as [string, string, string, string];
    const queue = async () =>
      (await admin.get(`/api/evidence/admin?review_status=new&q=${tag}`)).data.map((item: { id: string }) => item.id).sort();
    expect(await queue()).toEqual([...made].sort());
    const before = (await admin.get('/api/evidence/admin/counts')).data;
    expect(before.new).toBeGreaterThanOrEqual(4);
    expect(before.total).toBe(before.public + before.private);

    expect((await admin.put(`/api/evidence/clearance/${one}`)).data).toMatchObject({ is_public: true, review_status: 'reviewed' });
    const reviewedOne = await admin.put(`/api/evidence/review/${two}`);
    expect(reviewedOne.status).toBe(200);
    expect(reviewedOne.data).toMatchObject({ id: two, is_public: false, review_status: 'reviewed' });
    const reviewedMany = await admin.put('/api/evidence/review', { ids: [three, two, randomUUID()] });
    expect(reviewedMany.status).toBe(200);
    expect(reviewedMany.data).toMatchObject({ ok: true, reviewed: [three], unchanged: [two] });
    expect(reviewedMany.data.not_found).toHaveLength(1);
    expect(await queue()).toEqual([four]);

    const after = (await admin.get('/api/evidence/admin/counts')).data;
    expect(after.new).toBe(before.new - 3);
    expect(after.public).toBe(before.public + 1);
    const privateOnes = (await admin.get(`/api/evidence/admin?visibility=private&q=${tag}`)).data
      .map((item: { id: string }) => item.id)
      .sort();
    expect(privateOnes).toEqual([two, three, four].sort());
    expect((await admin.put(`/api/evidence/review/${randomUUID()}`)).status).toBe(404);
  });

  it('is for administrators only', async () => {
    const { client } = await newParticipant(portal.url);
    const visitor = new ApiClient(portal.url);
    for (const who of [client, visitor]) {
      const expected = who === visitor ? 401 : 403;
      expect((await who.get('/api/evidence/admin?review_status=new')).status).toBe(expected);
      expect((await who.get('/api/evidence/admin/counts')).status).toBe(expected);
      expect((await who.put('/api/evidence/review', { ids: [randomUUID()] })).status).toBe(expected);
      expect((await who.put('/api/evidence/visibility', { ids: [randomUUID()], is_public: true })).status).toBe(expected);
    }
  });
});

describe('publishing selected items', () => {
  it('changes each chosen item with one event each, and reports ids of no item', async () => {
    const { client } = await newParticipant(portal.url);
    const tag = tagWord();
    const ids: string[] = [];
    for (let i = 0; i < 3; i += 1) ids.push((await client.post('/api/evidence', { title: `Batch ${i} ${tag}`, notes: '' })).data.id);
    const unknown = randomUUID();
    const response = await admin.put('/api/evidence/visibility', { ids: [ids[0], ids[1], unknown, ids[0]], is_public: true });
    expect(response.status).toBe(200);
    expect(response.data).toEqual({ ok: true, is_public: true, changed: [ids[0], ids[1]], unchanged: [], not_found: [unknown] });
    expect((await publicIds(`&q=${tag}`)).sort()).toEqual([ids[0], ids[1]].sort());
    const again = await admin.put('/api/evidence/visibility', { ids: [ids[1], ids[2]], is_public: false });
    expect(again.data).toMatchObject({ changed: [ids[1]], unchanged: [ids[2]], not_found: [] });
    expect(await publicIds(`&q=${tag}`)).toEqual([ids[0]]);
    // A new item already at the chosen visibility is still reviewed by the act, and that is
    // recorded like a "Mark reviewed": an entry in the activity log, and no longer in the queue.
    const queue = await admin.get(`/api/evidence/admin?review_status=new&q=${tag}`);
    expect((queue.data as { id: string }[]).map((item) => item.id)).toEqual([]);
    const reviewed = await waitFor(
      async () =>
        ((await admin.get(`/api/admin/activity?target=${ids[2]}`)).data as { action: string }[]).find(
          (entry) => entry.action === 'evidence.mark-reviewed',
        ),
      { what: 'the mark-reviewed entry of the item already private' },
    );
    expect(reviewed).toBeTruthy();
    if (embedded) {
      await waitFor(
        () => {
          const events = publishedEvents(portal.dataDir).filter(
            (event) => event.value.type === 'evidence.visibility-changed' && ids.includes(event.key),
          );
          return events.length === 3 ? events : null;
        },
        { what: 'one visibility event per changed item' },
      ).then((events) => {
        expect(events.map((event) => [event.key, event.value.data.is_public])).toEqual([
          [ids[0], true],
          [ids[1], true],
          [ids[1], false],
        ]);
      });
    }
  });

  it('refuses a request that is not a list of 1 to 500 evidence ids with a clear 400', async () => {
    const cases: [unknown, string][] = [
      [{ ids: [], is_public: true }, 'Choose at least one item'],
      [{ ids: Array.from({ length: 501 }, () => randomUUID()), is_public: true }, 'At most 500 items can be changed at once'],
      [{ ids: ['not-an-id'], is_public: true }, 'Each id must be an evidence id'],
      [{ ids: [randomUUID()] }, 'is_public must be true or false'],
      [{ ids: 'x', is_public: false }, 'ids must be a list of evidence ids'],
      [[1, 2], 'Send a JSON object with ids and is_public'],
    ];
    for (const [body, message] of cases) {
      const response = await admin.put('/api/evidence/visibility', body);
      expect(response.status, JSON.stringify(body).slice(0, 80)).toBe(400);
      expect(response.data.message).toBe(message);
    }
    const many = await admin.put('/api/evidence/visibility', { ids: Array.from({ length: 500 }, () => randomUUID()), is_public: false });
    expect(many.status).toBe(200);
    expect(many.data.not_found).toHaveLength(500);
    expect((await admin.put('/api/evidence/review', { ids: [] })).status).toBe(400);
  });
});

describe('search', () => {
  it('finds words in titles and notes on the administration list and in the archive, with the other filters and paging', async () => {
    const { client } = await newParticipant(portal.url);
    const tag = tagWord();
    const lantern = await client.post('/api/evidence', { title: `Lantern parade ${tag}`, notes: 'Paper lanterns by the Église' });
    const drums = await client.post('/api/evidence', { title: `Drums ${tag}`, notes: 'Loud drumming near the lanterns' });
    const hidden = await client.post('/api/evidence', { title: `Private lantern ${tag}`, notes: '' });
    await admin.put('/api/evidence/visibility', { ids: [lantern.data.id, drums.data.id], is_public: true });

    const adminIds = async (query: string) =>
      (await admin.get(`/api/evidence/admin?${query}`)).data.map((item: { id: string }) => item.id).sort();
    expect(await adminIds(`q=${tag}+lantern`)).toEqual([lantern.data.id, drums.data.id, hidden.data.id].sort());
    expect(await adminIds(`q=${tag}+eglise`)).toEqual([lantern.data.id]);
    expect(await adminIds(`q=${tag}+DRUM&type=1`)).toEqual([drums.data.id]);
    expect(await adminIds(`q=${tag}+drum&type=2`)).toEqual([]);
    expect(await adminIds(`q=${tag}+lantern&visibility=private`)).toEqual([hidden.data.id]);

    expect((await publicIds(`&q=${tag}%20lantern`)).sort()).toEqual([lantern.data.id, drums.data.id].sort());
    // One's own list is searched the same way.
    const own = await client.get(`/api/evidence?q=${tag}+lantern+private`);
    expect(own.data.map((item: { id: string }) => item.id)).toEqual([hidden.data.id]);
    // Paging through a search: the next link keeps q.
    const first = await new ApiClient(portal.url).get(`/api/evidence/public?limit=1&q=${tag}%20lantern`);
    expect(first.data).toHaveLength(1);
    const next = /<([^>]+)>; rel="next"/.exec(first.headers.get('link') ?? '')?.[1];
    expect(next).toContain(`q=${tag}`);
    const second = await new ApiClient(portal.url).get(next!);
    expect([first.data[0].id, second.data[0].id].sort()).toEqual([lantern.data.id, drums.data.id].sort());
    expect(second.headers.get('link')).toBeNull();
  });

  it("keeps each search's answer apart in the gateway's public cache", async () => {
    const { client } = await newParticipant(portal.url);
    const [a, b] = [tagWord(), tagWord()];
    const first = await client.post('/api/evidence', { title: `Cached ${a}`, notes: '' });
    const second = await client.post('/api/evidence', { title: `Cached ${b}`, notes: '' });
    await admin.put('/api/evidence/visibility', { ids: [first.data.id, second.data.id], is_public: true });
    const visitor = new ApiClient(portal.url);
    for (let round = 0; round < 2; round += 1) {
      expect((await visitor.get(`/api/evidence/public?q=${a}`)).data.map((item: { id: string }) => item.id)).toEqual([first.data.id]);
      expect((await visitor.get(`/api/evidence/public?q=${b}`)).data.map((item: { id: string }) => item.id)).toEqual([second.data.id]);
    }
  });

  it('answers a search that is too long, or has too many words, with a clear 400, and ignores punctuation', async () => {
    const visitor = new ApiClient(portal.url);
    const long = await visitor.get(`/api/evidence/public?q=${'a'.repeat(201)}`);
    expect(long.status).toBe(400);
    expect(long.data.message).toBe('The search can be at most 200 characters long');
    const wordy = await visitor.get(`/api/evidence/public?q=${Array.from({ length: 13 }, (_, i) => `w${i}`).join('+')}`);
    expect(wordy.status).toBe(400);
    expect(wordy.data.message).toBe('Search for at most 12 words at once');
    for (const q of ['%22', '*', 'AND', '%28%29', 'NEAR%28a%29', '%5E']) {
      expect((await visitor.get(`/api/evidence/public?q=${q}`)).status, q).toBe(200);
      expect((await admin.get(`/api/evidence/admin?q=${q}`)).status, q).toBe(200);
    }
    expect((await visitor.get('/api/evidence/public?q=a&q=b')).status).toBe(400);
  });
});
