// The administration page and the public archive in Chromium, against a whole portal: an
// administrator makes one item public behind a confirmation and a visitor finds it in the archive
// (thumbnail in the grid, display media and author in the dialog); edits and deletes evidence;
// changes every item's visibility at once; and manages users (list, information, edit with its
// success and failure alerts, a user's evidence, delete with its alerts).
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { MESSAGES } from '@portal/contracts';
import type { ApiClient } from '../support/api-client.js';
import { adminClient, newParticipant } from '../support/accounts.js';
import { CHROMIUM_MISSING_REASON, OpenPages, chromiumMissing, launchBrowser } from '../support/browser.js';
import { uploadEvidence, waitForMedia, type EvidenceItem } from '../support/evidence.js';
import { phoneJpeg } from '../support/media.js';
import { TEST_ADMIN, startTestPortal, type TestPortal } from '../support/portal.js';

let portal: TestPortal;
let browser: Browser;
let workDir: string;
let admin: ApiClient;
let informant: { client: ApiClient; user: { id: string; username: string; email: string } };
let photo: EvidenceItem;
let note: EvidenceItem;
const pages = new OpenPages(() => ({ browser, url: portal.url }));

beforeAll(async () => {
  workDir = mkdtempSync(join(tmpdir(), 'evidence-admin-e2e-'));
  const photoPath = join(workDir, 'harbour.jpg');
  const [started, launched, bytes] = await Promise.all([
    startTestPortal(),
    chromiumMissing ? Promise.resolve(undefined as unknown as Browser) : launchBrowser(),
    phoneJpeg({ width: 1200, height: 900, orientation: 1 }),
  ]);
  portal = started;
  browser = launched;
  writeFileSync(photoPath, bytes);
  admin = (await adminClient(portal.url)).client;
  informant = await newParticipant(portal.url, { full_name: 'Ida Informant' });
  const uploaded = await uploadEvidence(informant.client, photoPath, {
    title: 'Harbour photo',
    notes: 'The boat came in without lights.',
    location: '40.71280, -74.00600 (±15 m)',
  });
  expect(uploaded.status).toBe(201);
  const created = await informant.client.post('/api/evidence', { title: 'Private note', notes: 'Not for the archive.' });
  expect(created.status).toBe(201);
  note = created.data as EvidenceItem;
  photo = await waitForMedia(informant.client, uploaded.data.id);
  expect(photo.media_status).toBe('ready');
}, 120_000);

afterAll(async () => {
  await browser?.close();
  await portal?.dispose();
  rmSync(workDir, { recursive: true, force: true });
});

afterEach(async () => {
  const errors = await pages.closeAll();
  // Refusals the test provokes on purpose are answered 4xx (the browser logs them as failed loads).
  expect(errors.filter((error) => !/Failed to load resource/.test(error))).toEqual([]);
});

function openPage(kind: 'admin' | 'visitor'): Promise<Page> {
  return kind === 'admin' ? pages.open('desktop', admin.cookies.get('portal_session')) : pages.open('phone');
}

async function openAdministration(page: Page): Promise<void> {
  await page.goto('/admin');
  await page.getByRole('heading', { level: 1, name: 'Administration' }).waitFor();
  await page.getByRole('heading', { level: 2, name: 'Evidence', exact: true }).waitFor();
  // The page opens on the review queue (tests/e2e/moderation.test.ts); these tests work on all evidence.
  await page.getByRole('group', { name: 'Show' }).getByRole('button', { name: /^All/ }).click();
}

function toast(page: Page, text: string) {
  return page.getByRole('alert').filter({ hasText: text });
}

async function item(id: string): Promise<EvidenceItem> {
  const response = await admin.get(`/api/evidence/item/${id}`);
  expect(response.status).toBe(200);
  return response.data as EvidenceItem;
}

describe.skipIf(chromiumMissing)('administration and archive (Chromium)', () => {
  if (chromiumMissing) console.warn(CHROMIUM_MISSING_REASON);

  it('an administrator makes one item public; a visitor finds it in the archive and opens it', async () => {
    const visitor = await openPage('visitor');
    await visitor.goto('/archive');
    await visitor.getByText(MESSAGES.archiveEmpty).waitFor();

    const page = await openPage('admin');
    await openAdministration(page);
    const list = page.getByRole('list', { name: 'All evidence' });
    await list.getByText('Private note').waitFor();
    await list.getByRole('button', { name: /Harbour photo/ }).click();
    const viewer = page.getByRole('dialog', { name: 'Harbour photo' });
    await viewer.getByText('The boat came in without lights.').waitFor();
    await viewer.getByText('Location: 40.71280, -74.00600 (±15 m)').waitFor();
    expect(await viewer.getByRole('img', { name: 'Harbour photo' }).getAttribute('src')).toMatch(/\/display/);
    const visibility = viewer.getByRole('switch', { name: 'Private' });
    expect(await visibility.isChecked()).toBe(false);
    await visibility.click();

    const confirm = page.getByRole('dialog', { name: 'Confirm Visibility Change' });
    await confirm.getByText('Make this evidence public? Anyone will see it in the public archive.').waitFor();
    await confirm.getByRole('button', { name: 'Confirm' }).click();
    await expect
      .poll(() => page.getByRole('dialog', { name: 'Harbour photo' }).getByRole('switch', { name: 'Public' }).isChecked())
      .toBe(true);
    expect((await item(photo.id)).is_public).toBe(true);
    await page.getByRole('dialog', { name: 'Harbour photo' }).getByRole('button', { name: 'Close' }).click();
    await list
      .getByRole('button', { name: /Harbour photo/ })
      .getByText('Public', { exact: true })
      .waitFor();

    // A visitor (a new phone, nothing cached) sees it, and only it.
    const fresh = await openPage('visitor');
    await fresh.goto('/archive');
    const cards = fresh.getByRole('list', { name: 'Public evidence' });
    const card = cards.getByRole('button', { name: 'Photo: Harbour photo' });
    await card.waitFor();
    expect(await cards.getByRole('listitem').count()).toBe(1);
    expect(await cards.getByText('Private note').count()).toBe(0);
    // The grid shows the small thumbnail, loaded lazily over its ThumbHash placeholder.
    const thumbnail = card.locator('img');
    expect(await thumbnail.getAttribute('src')).toMatch(/\/thumb/);
    expect(await thumbnail.getAttribute('loading')).toBe('lazy');
    await expect.poll(() => thumbnail.evaluate((element: HTMLImageElement) => element.complete && element.naturalWidth > 0)).toBe(true);
    const frame = await card.evaluate((element) => {
      const box = element.closest('li')!.getBoundingClientRect();
      const placeholder = getComputedStyle(element.querySelector('img')!.parentElement!).backgroundImage;
      return { width: box.width, height: box.height, placeholder };
    });
    expect(frame).toMatchObject({ width: 250, height: 357 });
    expect(frame.placeholder).toMatch(/^url\("data:image\/png;base64,/);

    await card.click();
    const dialog = fresh.getByRole('dialog', { name: 'Harbour photo' });
    await dialog.getByText('The boat came in without lights.').waitFor();
    await dialog.getByText(`Submitted by ${informant.user.username}`).waitFor();
    await dialog.getByText(/^Posted [A-Z][a-z]{2} \d{1,2}, \d{4}, \d{1,2}:\d{2}\s?[AP]M$/).waitFor();
    // The public sees a device position to about 100 m (PUBLIC_LOCATION_DECIMALS), not as recorded.
    await dialog.getByText('Location: 40.713, -74.006 (±111 m)').waitFor();
    const media = dialog.getByRole('img', { name: 'Harbour photo' });
    expect(await media.getAttribute('src')).toMatch(/\/display/);
    await expect.poll(() => media.evaluate((element: HTMLImageElement) => element.complete && element.naturalWidth > 0)).toBe(true);
    // No avatar: the default picture.
    expect(await dialog.locator('.MuiAvatar-root img').getAttribute('src')).toBe('/default-avatar.svg');

    await dialog.getByRole('button', { name: 'Close' }).click();
    // The filter: no public sound yet.
    await fresh.getByRole('button', { name: 'Audio', exact: true }).click();
    await fresh.getByText(MESSAGES.archiveEmpty).waitFor();
  });

  it('edits and deletes evidence from the viewer; makes everything public (the archive loads more as a visitor scrolls) and private again', async () => {
    const page = await openPage('admin');
    await openAdministration(page);
    const list = page.getByRole('list', { name: 'All evidence' });
    await list.getByRole('button', { name: /Private note/ }).click();
    let viewer = page.getByRole('dialog', { name: 'Private note' });
    await viewer.getByRole('button', { name: 'Edit' }).click();
    viewer = page.getByRole('dialog', { name: 'Edit Evidence' });
    await viewer.getByRole('textbox', { name: 'Title' }).fill('Checked note');
    await viewer.getByRole('button', { name: 'Save' }).click();
    viewer = page.getByRole('dialog', { name: 'Checked note' });
    await viewer.getByText('Not for the archive.').waitFor();
    expect((await item(note.id)).title).toBe('Checked note');
    await viewer.getByRole('button', { name: 'Close' }).click();
    await list.getByText('Checked note').waitFor();

    // Delete, after 'Confirm Delete'.
    await list.getByRole('button', { name: /Checked note/ }).click();
    await page.getByRole('dialog', { name: 'Checked note' }).getByRole('button', { name: 'Delete' }).click();
    const confirmDelete = page.getByRole('dialog', { name: 'Confirm Delete' });
    await confirmDelete.getByText('Are you sure you want to delete this evidence?').waitFor();
    await confirmDelete.getByRole('button', { name: 'Confirm' }).click();
    await toast(page, MESSAGES.evidenceDeleted).waitFor();
    await expect.poll(() => list.getByText('Checked note').count()).toBe(0);
    expect((await admin.get(`/api/evidence/item/${note.id}`)).status).toBe(404);

    // More than a page of evidence: 24 notes and the photo (public since the first test).
    const sightings: string[] = [];
    for (let index = 1; index <= 24; index += 1) {
      const created = await informant.client.post('/api/evidence', { title: `Sighting ${index}`, notes: `Sighting number ${index}.` });
      expect(created.status).toBe(201);
      sightings.push(created.data.id);
    }

    // 'Make All Public', behind its confirmation.
    await page.getByRole('button', { name: 'Make All Public' }).click();
    await page.getByRole('dialog', { name: 'Make All Evidence Public' }).getByRole('button', { name: 'Cancel' }).click();
    expect((await item(sightings[0]!)).is_public).toBe(false);
    await page.getByRole('button', { name: 'Make All Public' }).click();
    await page.getByRole('dialog', { name: 'Make All Evidence Public' }).getByRole('button', { name: 'Confirm' }).click();
    await toast(page, 'All evidence is now public (24 items changed).').waitFor();
    expect((await item(sightings[0]!)).is_public).toBe(true);
    await expect.poll(() => list.getByText('Private', { exact: true }).count()).toBe(0);

    // A visitor's archive loads the next page as they scroll down to it.
    const visitor = await openPage('visitor');
    await visitor.goto('/archive');
    const cards = visitor.getByRole('list', { name: 'Public evidence' }).getByRole('listitem');
    await cards.first().waitFor();
    expect(await cards.count()).toBe(24);
    await cards.last().scrollIntoViewIfNeeded();
    await visitor.getByRole('button', { name: 'Photo: Harbour photo' }).waitFor();
    expect(await cards.count()).toBe(25);

    await page.getByRole('button', { name: 'Make All Private' }).click();
    await page.getByRole('dialog', { name: 'Make All Evidence Private' }).getByRole('button', { name: 'Confirm' }).click();
    await toast(page, 'All evidence is now private').waitFor();
    expect((await item(photo.id)).is_public).toBe(false);
    expect((await item(sightings[23]!)).is_public).toBe(false);
  });

  it("lists users; shows, edits and refuses to break a user's information; shows their evidence; deletes users", async () => {
    const doomed = await newParticipant(portal.url, { full_name: 'Doomed Decoy' });
    const page = await openPage('admin');
    await openAdministration(page);
    await page.getByRole('button', { name: 'Show Users' }).click();
    await page.getByRole('heading', { level: 2, name: 'Users' }).waitFor();
    const users = page.getByRole('list', { name: 'Users' });
    await users.getByText(informant.user.username, { exact: true }).waitFor();
    await users.getByText(TEST_ADMIN.username, { exact: true }).waitFor();

    // Information.
    await page.getByRole('button', { name: `Info about ${informant.user.username}` }).click();
    let info = page.getByRole('dialog', { name: 'User Information' });
    await info.getByRole('img', { name: `Verification photo of ${informant.user.username}` }).waitFor();
    const shown = await info.locator('dl').innerText();
    for (const text of [
      'Username',
      informant.user.username,
      'Email',
      informant.user.email,
      'Phone Number',
      'Role',
      'User',
      'Full Name',
      'Ida Informant',
      'Video Watched',
      'Yes',
      'Participation Terms',
      'not recorded',
    ]) {
      expect(shown).toContain(text);
    }
    await expect
      .poll(() =>
        info
          .getByRole('img', { name: `Verification photo of ${informant.user.username}` })
          .evaluate((element: HTMLImageElement) => element.naturalWidth),
      )
      .toBeGreaterThan(0);

    // Edit: role and video watched stay read-only.
    await info.getByRole('button', { name: 'Edit User' }).click();
    expect(await info.getByRole('textbox', { name: 'Role' }).getAttribute('readonly')).not.toBeNull();
    expect(await info.getByRole('textbox', { name: 'Video Watched' }).getAttribute('readonly')).not.toBeNull();
    await info.getByRole('textbox', { name: 'Full Name' }).fill('Ida Q. Informant');
    await info.getByRole('textbox', { name: 'Phone Number' }).fill('5559876543');
    await info.getByRole('button', { name: 'Save Changes' }).click();
    await toast(page, MESSAGES.userUpdated).waitFor();
    await info.getByText('Ida Q. Informant').waitFor();
    const saved = (await admin.get('/api/user/users?limit=200')).data.find((user: { id: string }) => user.id === informant.user.id);
    expect(saved).toMatchObject({ full_name: 'Ida Q. Informant', phone_number: '5559876543', role: 1, video_watched: true });

    // A username that is taken: 'Error updating user.' and the server's words at the field.
    await info.getByRole('button', { name: 'Edit User' }).click();
    await info.getByRole('textbox', { name: 'Username' }).fill(TEST_ADMIN.username);
    await info.getByRole('button', { name: 'Save Changes' }).click();
    await toast(page, MESSAGES.userUpdateFailed).waitFor();
    await info.getByText(MESSAGES.usernameTaken).waitFor();
    await info.getByRole('button', { name: 'Cancel' }).click();
    await info.getByRole('button', { name: 'Close' }).click();

    // A user's evidence, and someone without any.
    await page.getByRole('button', { name: `Evidence of ${informant.user.username}` }).click();
    let evidence = page.getByRole('dialog', { name: `Evidence of ${informant.user.username}` });
    await evidence.getByRole('button', { name: /Sighting 24/ }).click();
    await page.getByRole('dialog', { name: 'Sighting 24' }).getByText('Sighting number 24.').waitFor();
    await page.getByRole('dialog', { name: 'Sighting 24' }).getByRole('button', { name: 'Close' }).click();
    evidence = page.getByRole('dialog', { name: `Evidence of ${informant.user.username}` });
    await evidence.getByRole('button', { name: 'Close' }).click();
    await page.getByRole('button', { name: `Evidence of ${TEST_ADMIN.username}` }).click();
    evidence = page.getByRole('dialog', { name: `Evidence of ${TEST_ADMIN.username}` });
    await evidence.getByText(MESSAGES.noEvidenceForUser).waitFor();
    await evidence.getByRole('button', { name: 'Close' }).click();

    // Deleting oneself is refused; deleting a participant works.
    await page.getByRole('button', { name: `Delete ${TEST_ADMIN.username}` }).click();
    await page.getByRole('dialog', { name: 'Confirm Delete User' }).getByRole('button', { name: 'Confirm' }).click();
    await toast(page, MESSAGES.userDeleteFailed).waitFor();
    await page.getByRole('button', { name: `Delete ${doomed.user.username}` }).click();
    info = page.getByRole('dialog', { name: 'Confirm Delete User' });
    await info.getByText(`Are you sure you want to delete the user ${doomed.user.username}?`, { exact: false }).waitFor();
    await info.getByRole('button', { name: 'Confirm' }).click();
    await toast(page, MESSAGES.userDeleted).waitFor();
    await expect.poll(() => users.getByText(doomed.user.username, { exact: true }).count()).toBe(0);
    expect((await doomed.client.get('/api/user')).status).toBe(401);

    // Back to the evidence.
    await page.getByRole('button', { name: 'Show Evidence' }).click();
    await page.getByRole('heading', { level: 2, name: 'Evidence', exact: true }).waitFor();
  });
});
