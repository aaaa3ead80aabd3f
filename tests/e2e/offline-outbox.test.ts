// The installable app's outbox in Chromium on a phone: evidence captured without a network (a
// note, a photo and a recording) is kept on the phone through a reload made offline, and reaches
// the server once each when the network is back; a large upload cut off mid-way goes on from the
// stored offset after the page is closed and opened again, not from zero.
import { appendFileSync, cpSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import sharp from 'sharp';
import type { Page, Route } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MESSAGES } from '@portal/contracts';
import type { ApiClient } from '../support/api-client.js';
import { CHROMIUM_MISSING_REASON, chromiumMissing, phoneContext } from '../support/browser.js';
import { phoneJpeg } from '../support/media.js';
import { OFFLINE_REQUEST_ERRORS, PhoneSuite, installedApp as installedAppOf, workerInControl } from '../support/phone.js';
import { startTestPortal } from '../support/portal.js';

const CHUNK = 5 * 1024 * 1024;

let workDir: string;
let photo: string;
let notMedia: string;
/** Three 5 MiB chunks. */
let bigPhoto: string;
let bigPhotoSize: number;
const phone = new PhoneSuite();
const { pages } = phone;

async function ownItems(client: ApiClient): Promise<{ id: string; title: string; media_type: number }[]> {
  const response = await client.get('/api/evidence?limit=100');
  expect(response.status).toBe(200);
  return response.data as { id: string; title: string; media_type: number }[];
}

/** A participant's phone with the app installed: the service worker active and in control. */
const installedApp = () => installedAppOf(pages);

async function addEvidence(page: Page, option: 'Camera' | 'Audio' | 'Notes'): Promise<void> {
  await page.getByRole('button', { name: 'Add evidence' }).click();
  await page.getByRole('menuitem', { name: option }).click();
}

async function describeAndSend(page: Page, title: string): Promise<void> {
  await page.waitForURL('**/evidence-details');
  await page.getByRole('textbox', { name: 'Title' }).fill(title);
  await page.getByRole('button', { name: 'Upload Evidence' }).click();
}

function outboxEntry(page: Page, title: string) {
  return page.getByRole('list', { name: 'Evidence waiting to upload' }).getByRole('listitem').filter({ hasText: title });
}

describe.skipIf(chromiumMissing)('the outbox of the installable app (Chromium, phone)', () => {
  if (chromiumMissing) console.warn(CHROMIUM_MISSING_REASON);

  beforeAll(async () => {
    workDir = mkdtempSync(join(tmpdir(), 'outbox-e2e-'));
    notMedia = join(workDir, 'minutes.jpg');
    writeFileSync(notMedia, 'minutes of the meeting, not a photo at all\n'.repeat(200));
    photo = join(workDir, 'gate.jpg');
    writeFileSync(photo, await phoneJpeg());
    const noise = sharp({
      create: {
        width: 2200,
        height: 2200,
        channels: 3,
        background: { r: 0, g: 0, b: 0 },
        noise: { type: 'gaussian', mean: 128, sigma: 70 },
      },
    });
    const big = await noise.jpeg({ quality: 100, chromaSubsampling: '4:4:4' }).toBuffer();
    bigPhotoSize = big.length;
    if (bigPhotoSize <= 2 * CHUNK || bigPhotoSize > 3 * CHUNK)
      throw new Error(`the photo should be three chunks, not ${bigPhotoSize} bytes`);
    bigPhoto = join(workDir, 'crowd.jpg');
    writeFileSync(bigPhoto, big);
  }, 120_000);

  // Requests made offline or cut on purpose fail; nothing else may.
  phone.start({ tolerated: OFFLINE_REQUEST_ERRORS, timeoutMs: 120_000 });

  afterAll(() => {
    if (workDir) rmSync(workDir, { recursive: true, force: true });
  });

  it('keeps a note, a photo and a recording made offline through a reload, and sends each once when the network is back', async () => {
    const { page, context, participant } = await installedApp();
    await context.setOffline(true);

    await addEvidence(page, 'Notes');
    await describeAndSend(page, 'Offline note at the gate');
    await page.waitForURL('**/evidence');
    await outboxEntry(page, 'Offline note at the gate').getByText('Waiting for network').waitFor();

    await addEvidence(page, 'Camera');
    const [chooser] = await Promise.all([page.waitForEvent('filechooser'), page.getByRole('button', { name: 'Upload File' }).click()]);
    await chooser.setFiles(photo);
    await describeAndSend(page, 'Offline photo of the gate');
    await page.waitForURL('**/evidence');

    await addEvidence(page, 'Audio');
    await page.getByRole('button', { name: 'Start Recording' }).click();
    const timer = page.getByRole('timer');
    await expect.poll(async () => Number(await timer.getAttribute('data-seconds')), { timeout: 10_000 }).toBeGreaterThanOrEqual(2);
    await page.getByRole('button', { name: 'Save Recording' }).click();
    await describeAndSend(page, 'Offline sound of the gate');
    await page.waitForURL('**/evidence');

    // Still offline, the page is opened again: the app and the three captures are still there.
    await page.reload();
    for (const title of ['Offline note at the gate', 'Offline photo of the gate', 'Offline sound of the gate']) {
      await outboxEntry(page, title).getByText('Waiting for network').waitFor();
    }
    expect(await ownItems(participant.client)).toEqual([]);

    await context.setOffline(false);
    for (const title of ['Offline note at the gate', 'Offline photo of the gate', 'Offline sound of the gate']) {
      await outboxEntry(page, title).getByText('Uploaded').waitFor({ timeout: 30_000 });
    }
    const items = await ownItems(participant.client);
    expect(items.map((item) => `${item.media_type} ${item.title}`).sort()).toEqual([
      '1 Offline note at the gate',
      '2 Offline photo of the gate',
      '4 Offline sound of the gate',
    ]);
    // Done entries let their files go.
    const files = await page.evaluate(
      () =>
        new Promise<number>((resolve, reject) => {
          const open = indexedDB.open('evidence-outbox');
          open.onerror = () => reject(open.error);
          open.onsuccess = () => {
            const all = open.result.transaction('entries').objectStore('entries').getAll();
            all.onsuccess = () => resolve((all.result as { file: Blob | null }[]).filter((entry) => entry.file !== null).length);
          };
        }),
    );
    expect(files).toBe(0);
  });

  it('sends the outbox from the service worker when Background Sync wakes it with no page open', async () => {
    const { page, context, participant } = await installedApp();
    await context.setOffline(true);
    await addEvidence(page, 'Notes');
    await describeAndSend(page, 'Synced note from the square');
    await page.waitForURL('**/evidence');
    await addEvidence(page, 'Camera');
    const [chooser] = await Promise.all([page.waitForEvent('filechooser'), page.getByRole('button', { name: 'Upload File' }).click()]);
    await chooser.setFiles(bigPhoto);
    await describeAndSend(page, 'Synced photo from the square');
    await page.waitForURL('**/evidence');
    await outboxEntry(page, 'Synced photo from the square').getByText('Waiting for network').waitFor();

    // Only a blank tab is left (no page of the portal), and the network is back.
    const blank = await context.newPage();
    const cdp = await context.newCDPSession(blank);
    const registrations: { registrationId: string; scopeURL: string; isDeleted?: boolean }[] = [];
    cdp.on('ServiceWorker.workerRegistrationUpdated', (event: { registrations: typeof registrations }) =>
      registrations.push(...event.registrations),
    );
    await cdp.send('ServiceWorker.enable');
    await expect
      .poll(() => registrations.some((entry) => entry.scopeURL.startsWith(phone.portal.url) && !entry.isDeleted), { timeout: 10_000 })
      .toBe(true);
    const registration = registrations.find((entry) => entry.scopeURL.startsWith(phone.portal.url) && !entry.isDeleted)!;
    await page.close();
    await context.setOffline(false);
    // What Chromium does when the connection returns: the sync event, to the service worker alone.
    await cdp.send('ServiceWorker.dispatchSyncEvent', {
      origin: new URL(phone.portal.url).origin,
      registrationId: registration.registrationId,
      tag: 'evidence-outbox',
      lastChance: false,
    });
    await expect
      .poll(async () => (await ownItems(participant.client)).map((item) => `${item.media_type} ${item.title}`).sort(), { timeout: 60_000 })
      .toEqual(['1 Synced note from the square', '2 Synced photo from the square']);

    // Opened again: both are uploaded, and nothing is sent twice.
    const reopened = await context.newPage();
    await reopened.goto('/evidence');
    for (const title of ['Synced note from the square', 'Synced photo from the square'])
      await outboxEntry(reopened, title).getByText('Uploaded').waitFor();
    await reopened.waitForTimeout(2000);
    expect(await ownItems(participant.client)).toHaveLength(2);
  });

  it('says why a capture made offline was refused, and lets it be deleted from the phone', async () => {
    const { page, context, participant } = await installedApp();
    await context.setOffline(true);
    await addEvidence(page, 'Camera');
    const [chooser] = await Promise.all([page.waitForEvent('filechooser'), page.getByRole('button', { name: 'Upload File' }).click()]);
    await chooser.setFiles(notMedia);
    await describeAndSend(page, 'Minutes of the meeting');
    await page.waitForURL('**/evidence');
    await outboxEntry(page, 'Minutes of the meeting').getByText('Waiting for network').waitFor();
    await context.setOffline(false);
    const entry = outboxEntry(page, 'Minutes of the meeting');
    await entry.getByText(`Failed: ${MESSAGES.unsupportedEvidenceFile}`).waitFor({ timeout: 30_000 });
    // Refused for good: it is not sent again by itself; Retry asks the server once more.
    await entry.getByRole('button', { name: 'Retry Minutes of the meeting' }).click();
    await entry.getByText(`Failed: ${MESSAGES.unsupportedEvidenceFile}`).waitFor({ timeout: 30_000 });
    await entry.getByRole('button', { name: 'Delete Minutes of the meeting' }).click();
    await page.getByRole('dialog', { name: 'Delete from this phone?' }).getByRole('button', { name: 'Delete' }).click();
    await entry.waitFor({ state: 'detached' });
    expect(await ownItems(participant.client)).toEqual([]);
  });

  it('offers a new release when one is out, and switches to it when asked', async () => {
    // A portal serving its own copy of the build, so that a "release" can change its service worker.
    const webDist = join(workDir, 'web-dist');
    cpSync(fileURLToPath(new URL('../../web/dist', import.meta.url)), webDist, { recursive: true });
    const releasing = await startTestPortal({ WEB_DIST: webDist });
    const context = await phoneContext(phone.browser, releasing.url, { serviceWorkers: 'allow' });
    try {
      const page = await context.newPage();
      await page.goto('/archive');
      await workerInControl(page);
      expect(await page.getByText('A new version of the portal is available.').count()).toBe(0);

      appendFileSync(join(webDist, 'sw.js'), '\n// the next release\n');
      await page.evaluate(async () => {
        await (await navigator.serviceWorker.getRegistration())?.update();
      });
      const prompt = page.getByRole('status').filter({ hasText: 'A new version of the portal is available.' });
      await prompt.waitFor({ timeout: 30_000 });
      await Promise.all([page.waitForEvent('load'), prompt.getByRole('button', { name: 'Reload' }).click()]);
      await page.getByText('Archive').first().waitFor();
      expect(await page.evaluate(async () => (await navigator.serviceWorker.getRegistration())?.waiting ?? null)).toBeNull();
      expect(await page.getByText('A new version of the portal is available.').count()).toBe(0);
    } finally {
      await context.close();
      await releasing.dispose();
    }
  });

  it('plays the onboarding video offline, and leaves unknown addresses to the server (404)', async () => {
    const { page } = await pages.signedInPage({ watched: false, serviceWorkers: 'allow' });
    await page.goto('/user');
    await page.getByRole('dialog', { name: /Welcome to/ }).waitFor();
    await workerInControl(page);
    expect((await page.goto('/no-such-page'))?.status()).toBe(404);
    await page.getByRole('heading', { level: 1, name: '404' }).waitFor();

    await page.context().setOffline(true);
    await page.goto('/user');
    const welcome = page.getByRole('dialog', { name: /Welcome to/ });
    await welcome.getByRole('button', { name: 'Play' }).click();
    const video = welcome.getByLabel('Onboarding video');
    await expect.poll(() => video.evaluate((element: HTMLVideoElement) => element.currentTime), { timeout: 15_000 }).toBeGreaterThan(0.5);
    expect(await welcome.getByText('The video could not be loaded').count()).toBe(0);
  });

  it('goes on with a large upload cut off mid-way from the stored offset after the page is closed and opened again', async () => {
    const { page, context, participant } = await installedApp();
    const firstPatches: number[] = [];
    let cut: () => void = () => undefined;
    const cutDone = new Promise<void>((resolve) => (cut = resolve));
    await page.route('**/api/evidence/uploads/**', async (route: Route) => {
      const request = route.request();
      if (request.method() !== 'PATCH') return route.continue();
      const offset = Number((await request.allHeaders())['upload-offset'] ?? -1);
      firstPatches.push(offset);
      if (offset >= CHUNK) {
        // The connection drops while the second chunk is on the way, and the phone locks.
        await route.abort('connectionreset');
        cut();
        return;
      }
      return route.continue();
    });
    await addEvidence(page, 'Camera');
    const [chooser] = await Promise.all([page.waitForEvent('filechooser'), page.getByRole('button', { name: 'Upload File' }).click()]);
    await chooser.setFiles(bigPhoto);
    await describeAndSend(page, 'Crowd at the north gate');
    await cutDone;
    // The outbox knows the upload's address and what the server has.
    await expect
      .poll(
        () =>
          page.evaluate(
            () =>
              new Promise<{ sent: number; uploadUrl: string | null } | null>((resolve, reject) => {
                const open = indexedDB.open('evidence-outbox');
                open.onerror = () => reject(open.error);
                open.onsuccess = () => {
                  const all = open.result.transaction('entries').objectStore('entries').getAll();
                  all.onsuccess = () => resolve((all.result as { sent: number; uploadUrl: string | null }[])[0] ?? null);
                };
              }),
          ),
        { timeout: 15_000 },
      )
      .toMatchObject({ sent: CHUNK, uploadUrl: expect.stringMatching(/^\/api\/evidence\/uploads\//) });
    await page.close();

    // Opened again, in the same browser: the upload goes on from 5 MiB.
    const requests: string[] = [];
    await context.route('**/api/evidence/uploads**', async (route: Route) => {
      const request = route.request();
      const offset = (await request.allHeaders())['upload-offset'];
      requests.push(`${request.method()}${offset === undefined ? '' : ` ${offset}`}`);
      return route.continue();
    });
    const reopened = await context.newPage();
    await reopened.goto('/evidence');
    await outboxEntry(reopened, 'Crowd at the north gate').getByText('Uploaded').waitFor({ timeout: 60_000 });
    expect(firstPatches[0]).toBe(0);
    // The page asks the server where the upload stands and goes on from there: never from zero,
    // never as a new upload. It may be past 5 MiB already, because the service worker may have
    // carried on while no page was open (Background Sync), which the routes here do not see.
    expect(requests).not.toContain('POST');
    expect(requests[0]).toBe('HEAD');
    const patchOffsets = requests.filter((line) => line.startsWith('PATCH ')).map((line) => Number(line.slice('PATCH '.length)));
    expect(patchOffsets.length).toBeGreaterThan(0);
    expect(Math.min(...patchOffsets)).toBeGreaterThanOrEqual(CHUNK);
    const items = (await ownItems(participant.client)).filter((item) => item.title === 'Crowd at the north gate');
    expect(items).toHaveLength(1);
    expect(items[0]!.media_type).toBe(2);
  });
});
