// Faces blurred before the public sees them, in Chromium against a whole portal (all-in-one in
// npm test, the five processes in the distributed suite): an administrator reviews a group photo
// and a short video made from it on the originals, with the detector's boxes drawn over them,
// and publishes both; a visitor's copies are blurred (the portal's detector finds no face in
// them) where the owner's are not (it finds the three). Then the review dialog's decisions: a box
// added from the keyboard and by dragging, a region removed, consent on record.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { ApiClient } from '../support/api-client.js';
import { adminClient, newParticipant } from '../support/accounts.js';
import { violations } from '../support/axe.js';
import { CHROMIUM_MISSING_REASON, OpenPages, chromiumMissing, launchBrowser } from '../support/browser.js';
import { uploadEvidence, waitForFinalMedia, waitForMedia, type EvidenceItem } from '../support/evidence.js';
import { GROUP_PHOTO, makeGroupVideo } from '../support/face-fixtures.js';
import { FaceCounter } from '../support/faces.js';
import { startTestPortal, type TestPortal } from '../support/portal.js';

let portal: TestPortal;
let browser: Browser;
let workDir: string;
let admin: ApiClient;
let owner: ApiClient;
let counter: FaceCounter;
let photo: EvidenceItem;
let video: EvidenceItem;
const pages = new OpenPages(() => ({ browser, url: portal.url }));

beforeAll(async () => {
  workDir = mkdtempSync(join(tmpdir(), 'faces-e2e-'));
  const [started, launched, clip] = await Promise.all([
    startTestPortal(),
    chromiumMissing ? Promise.resolve(undefined as unknown as Browser) : launchBrowser(),
    makeGroupVideo(GROUP_PHOTO, join(workDir, 'group.mp4'), 2),
  ]);
  portal = started;
  browser = launched;
  counter = new FaceCounter();
  admin = (await adminClient(portal.url)).client;
  owner = (await newParticipant(portal.url)).client;
  const photoId = (await uploadEvidence(owner, GROUP_PHOTO, { title: 'Group at the corner' })).data.id as string;
  const videoId = (await uploadEvidence(owner, clip, { title: 'Group walking' })).data.id as string;
  photo = await waitForMedia(owner, photoId);
  video = await waitForFinalMedia(owner, videoId, 180_000);
}, 300_000);

afterAll(async () => {
  await counter?.close();
  await browser?.close();
  await portal?.dispose();
  rmSync(workDir, { recursive: true, force: true });
});

afterEach(async () => {
  const errors = await pages.closeAll();
  expect(errors.filter((error) => !/Failed to load resource/.test(error))).toEqual([]);
});

async function openItem(page: Page, title: string) {
  await page.goto('/admin');
  await page.getByRole('heading', { level: 1, name: 'Administration' }).waitFor();
  await page.getByRole('group', { name: 'Show' }).getByRole('button', { name: /^All/ }).click();
  await page
    .getByRole('list', { name: 'All evidence' })
    .getByRole('button', { name: new RegExp(title) })
    .click();
  return page.getByRole('dialog', { name: title });
}

/** The bytes behind a media element's URL, fetched as the page's viewer would (a visitor has no session). */
const served = (client: ApiClient, src: string | null) => client.bytes(src!).then((response) => response.body);

describe.skipIf(chromiumMissing)('faces (Chromium)', () => {
  if (chromiumMissing) console.warn(CHROMIUM_MISSING_REASON);

  it('an administrator publishes a group photo and a video made from it; the visitor gets them blurred, the owner as taken', async () => {
    const page = await pages.open('desktop', admin.cookies.get('portal_session'));
    const photoDialog = await openItem(page, 'Group at the corner');
    // The boxes over the original: three faces found, each listed with its decision.
    const faces = photoDialog.getByRole('list', { name: 'Faces in this picture' });
    await expect.poll(() => faces.getByRole('listitem').count()).toBe(3);
    expect(await photoDialog.locator('[data-face]').count()).toBe(3);
    await photoDialog.getByText('3 faces are blurred in the public copy.').waitFor();
    expect(await photoDialog.getByRole('img', { name: /as taken, faces not blurred/ }).getAttribute('src')).toMatch(/\/display\?/);
    expect(await violations(page)).toEqual([]);
    await photoDialog.getByRole('switch', { name: 'Private' }).click();
    await page.getByRole('dialog', { name: 'Confirm Visibility Change' }).getByRole('button', { name: 'Confirm' }).click();
    await expect.poll(() => photoDialog.getByRole('switch', { name: 'Public' }).isChecked()).toBe(true);
    await photoDialog.getByRole('button', { name: 'Close' }).click();

    const videoDialog = await openItem(page, 'Group walking');
    await videoDialog.getByText(/faces? (is|are) blurred in the public copy\./).waitFor();
    expect(await videoDialog.getByRole('list', { name: 'Faces in this picture' }).getByRole('listitem').count()).toBeGreaterThanOrEqual(3);
    await videoDialog.getByRole('switch', { name: 'Private' }).click();
    await page.getByRole('dialog', { name: 'Confirm Visibility Change' }).getByRole('button', { name: 'Confirm' }).click();
    await expect.poll(() => videoDialog.getByRole('switch', { name: 'Public' }).isChecked()).toBe(true);

    // A visitor on a phone: the archive's photo and video are the blurred copies.
    const visitor = await pages.open('phone');
    await visitor.goto('/archive');
    const cards = visitor.getByRole('list', { name: 'Public evidence' });
    await cards.getByRole('button', { name: 'Photo: Group at the corner' }).click();
    const shownPhoto = visitor.getByRole('dialog', { name: 'Group at the corner' }).getByRole('img', { name: 'Group at the corner' });
    const publicPhotoSrc = await shownPhoto.getAttribute('src');
    expect(publicPhotoSrc).toContain('/blurred-display');
    await expect.poll(() => shownPhoto.evaluate((element: HTMLImageElement) => element.complete && element.naturalWidth > 0)).toBe(true);
    const anonymous = new ApiClient(portal.url);
    expect(await counter.inPicture(await served(anonymous, publicPhotoSrc))).toBe(0);
    await visitor.getByRole('dialog', { name: 'Group at the corner' }).getByRole('button', { name: 'Close' }).click();
    await cards.getByRole('button', { name: 'Video: Group walking' }).click();
    const shownVideo = visitor.getByRole('dialog', { name: 'Group walking' }).locator('video');
    const publicVideoSrc = await shownVideo.getAttribute('src');
    expect(publicVideoSrc).toContain('/blurred-display');
    expect(await shownVideo.getAttribute('poster')).toContain('/blurred-poster');
    const publicClip = await counter.inVideo(await served(anonymous, publicVideoSrc));
    expect(publicClip.samples).toBeGreaterThanOrEqual(8);
    expect(publicClip.faces).toBe(0);
    expect(await counter.inPicture(await served(anonymous, await shownVideo.getAttribute('poster')))).toBe(0);

    // The owner's own list: the pictures as taken.
    const own = await pages.open('phone', owner.cookies.get('portal_session'));
    await own.goto('/Evidence');
    await own
      .getByRole('button', { name: /Group at the corner|Group at/ })
      .first()
      .click();
    const ownPhotoSrc = await own.getByRole('dialog').getByRole('img', { name: 'Group at the corner' }).getAttribute('src');
    expect(ownPhotoSrc).toBe(photo.aws_url);
    expect(await counter.inPicture(await served(owner, ownPhotoSrc))).toBe(3);
    expect((await counter.inVideo(await served(owner, video.aws_url))).faces).toBeGreaterThanOrEqual(3);
    // What the visitor was given of the original is nothing at all.
    expect((await anonymous.bytes(ownPhotoSrc!)).status).toBe(404);
    // The detector reads two videos and three pictures here: more than a page test's usual 30 s on a busy machine.
  }, 120_000);

  it("the review dialog's decisions: a box added from the keyboard and by dragging, a face shown, consent on record", async () => {
    const page = await pages.open('desktop', admin.cookies.get('portal_session'));
    const dialog = await openItem(page, 'Group at the corner');
    const faces = dialog.getByRole('list', { name: 'Faces in this picture' });
    await expect.poll(() => faces.getByRole('listitem').count()).toBe(3);

    // From the keyboard: the box's position in percent, then Enter.
    const form = dialog.getByRole('form', { name: 'Add a box by its position' });
    await form.getByLabel('Left %').fill('2');
    await form.getByLabel('Top %').fill('60');
    await form.getByLabel('Width %').fill('15');
    await form.getByLabel('Height %').fill('25');
    await form.getByLabel('Height %').press('Enter');
    await expect.poll(() => faces.getByRole('listitem').count()).toBe(4);
    await faces.getByText('Box 4, added by an administrator').waitFor();

    // By dragging over the picture.
    await dialog.getByRole('button', { name: 'Draw a box to hide' }).click();
    const layer = dialog.getByTestId('face-boxes');
    const area = (await layer.boundingBox())!;
    await page.mouse.move(area.x + area.width * 0.8, area.y + area.height * 0.7);
    await page.mouse.down();
    await page.mouse.move(area.x + area.width * 0.9, area.y + area.height * 0.85, { steps: 5 });
    await page.mouse.up();
    await expect.poll(() => faces.getByRole('listitem').count()).toBe(5);

    // A face that is no face to hide (a poster on a wall): shown, and can be hidden again.
    await dialog.getByRole('button', { name: 'Not a face to hide: face 1' }).click();
    await faces.getByText(/Face 1, found by the detector .* shown \(not a face to hide\)/).waitFor();
    await dialog.getByRole('button', { name: 'Hide again: face 1' }).waitFor();

    // Consent on record, with where it is kept.
    await dialog.getByRole('switch', { name: 'Faces may be shown (consent on record)' }).click();
    const ask = page.getByRole('dialog', { name: 'Faces may be shown?' });
    await ask.getByLabel('Where the consent is on record (optional)').fill('Signed releases, box office file 12');
    expect(await violations(page)).toEqual([]);
    await ask.getByRole('button', { name: 'Record consent' }).click();
    await dialog.getByText('Faces may be shown (consent on record): the public sees the picture as it is.').waitFor();
    const activity = await admin.get(`/api/admin/activity?target=${photo.id}`);
    expect(activity.data.map((entry: { action: string }) => entry.action)).toEqual(
      expect.arrayContaining(['evidence.faces-edit', 'evidence.faces-consent']),
    );
    // The decisions are undone again for the public: consent taken back, the blurred copy follows the boxes.
    await dialog.getByRole('switch', { name: 'Faces may be shown (consent on record)' }).click();
    await dialog.getByText(/blurred in the public copy|being made/).waitFor();
  });
});
