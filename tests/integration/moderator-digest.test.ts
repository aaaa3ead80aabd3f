import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { adminClient, newParticipant } from '../support/accounts.js';
import { uploadEvidence } from '../support/evidence.js';
import { phoneJpeg } from '../support/media.js';
import { readOutbox, waitForMail, type ReceivedMail } from '../support/outbox.js';
import { waitFor } from '@portal/platform/testing';
import { startTestPortal, TEST_ADMIN, type TestPortal } from '../support/portal.js';

// 0.05 minutes: a digest at most every 3 seconds, checked every second.
const PERIOD_MS = 3000;
let portal: TestPortal;
let scratch: string;
beforeAll(async () => {
  scratch = mkdtempSync(join(tmpdir(), 'moderator-digest-'));
  portal = await startTestPortal({ MODERATION_DIGEST_MINUTES: '0.05', PUBLIC_URL: 'https://portal.example.org' });
});
afterAll(async () => {
  await portal.dispose();
  rmSync(scratch, { recursive: true, force: true });
});

const digests = async () =>
  (await readOutbox(portal.dataDir)).filter((mail) => mail.to.includes(TEST_ADMIN.email) && /to review/.test(mail.subject));
/** The number of items of a kind ("photo", "note") the digests counted together. */
const sum = (mails: ReceivedMail[], kind: string) =>
  mails.reduce((total, mail) => total + Number(new RegExp(`^- (\\d+) ${kind}s?$`, 'm').exec(mail.text)?.[1] ?? 0), 0);
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe('the moderator digest', () => {
  it('is not sent while nothing new was posted', async () => {
    await newParticipant(portal.url);
    await sleep(2.5 * PERIOD_MS);
    expect(await digests()).toEqual([]);
  });

  it('tells administrators, once per period, what was posted by kind, with a link to the queue', async () => {
    const { client } = await newParticipant(portal.url);
    writeFileSync(join(scratch, 'photo.jpg'), await phoneJpeg({ width: 320, height: 240 }));
    expect((await uploadEvidence(client, join(scratch, 'photo.jpg'), { title: 'A photo' })).status).toBe(201);
    expect((await client.post('/api/evidence', { title: 'First note', notes: '' })).status).toBe(201);
    expect((await client.post('/api/evidence', { title: 'Second note', notes: '' })).status).toBe(201);

    // The three posts may fall either side of a period's end: together the digests count them.
    const sent = await waitFor(
      async () => {
        const mails = await digests();
        return sum(mails, 'photo') === 1 && sum(mails, 'note') === 2 ? mails : null;
      },
      { timeoutMs: 20_000, what: 'digests counting the three posts' },
    );
    const mail = sent.at(-1)!;
    expect(mail.subject).toMatch(/^\d new items? to review in Operation Test$/);
    expect(mail.text).toMatch(/- 0 videos/);
    expect(mail.text).toContain('Review them: https://portal.example.org/admin');
    expect(mail.html).toContain('href="https://portal.example.org/admin"');
    // Participants get no digest.
    expect((await readOutbox(portal.dataDir)).filter((m) => /to review/.test(m.subject) && !m.to.includes(TEST_ADMIN.email))).toEqual([]);

    // Nothing new since: no further digest over the next periods.
    await sleep(2.5 * PERIOD_MS);
    expect(await digests()).toHaveLength(sent.length);

    // Something new again: the next digest counts only that.
    expect((await client.post('/api/evidence', { title: 'Third note', notes: '' })).status).toBe(201);
    const second = await waitForMail(portal.dataDir, TEST_ADMIN.email, { count: sent.length + 1, subject: /to review/ });
    expect(second.subject).toMatch(/^1 new item to review/);
    expect(second.text).toContain('- 1 note');
  }, 60_000);

  it('counts only what waits in the review queue: not what was published or marked reviewed meanwhile, but an edit sent back to it', async () => {
    const admin = (await adminClient(portal.url)).client;
    const { client } = await newParticipant(portal.url);
    const post = async (title: string) => ((await client.post('/api/evidence', { title, notes: '' })).data as { id: string }).id;
    const before = (await digests()).length;
    const approved = await post('Approved earlier');
    expect((await admin.put('/api/evidence/visibility', { ids: [approved], is_public: true })).status).toBe(200);
    await post('Waiting, to bring a digest');
    // Right after a digest the next is a period away: what follows falls into one digest.
    await waitForMail(portal.dataDir, TEST_ADMIN.email, { count: before + 1, subject: /to review/ });
    const reviewed = await post('Seen, left private');
    const published = await post('Seen, published');
    expect((await admin.put('/api/evidence/review', { ids: [reviewed] })).status).toBe(200);
    expect((await admin.put('/api/evidence/visibility', { ids: [published], is_public: true })).status).toBe(200);
    await post('Still waiting');
    // The participant's edit takes the approved item out of the archive and back into the queue.
    expect((await client.put(`/api/evidence/update/${approved}`, { title: 'Approved earlier, changed', notes: 'more' })).status).toBe(200);

    const next = await waitForMail(portal.dataDir, TEST_ADMIN.email, { count: before + 2, subject: /to review/ });
    expect(next.subject).toMatch(/^2 new items to review/);
    expect(next.text).toContain('- 2 notes');
    expect(next.text).toContain('- 0 photos');
    expect(next.text).toContain('2 new items came into the review queue since the last digest');
  }, 60_000);
});
