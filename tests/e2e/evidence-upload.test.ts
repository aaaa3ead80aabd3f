// A participant's evidence screens in Chromium on a phone, against a whole portal: a photo sent
// from a file with the resumable upload (and its progress bar moving), a recording made with
// Chromium's fake microphone, a note; the own list following processing until 'ready'; the
// detail, edit and delete dialogs; a refused file explained in words; and an upload that loses
// its connection twice (offline mid-upload, then the answer to the last PATCH) and still ends as
// exactly one item.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Browser, BrowserContext, Page, Route } from 'playwright-core';
import sharp from 'sharp';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { DEFAULT_EVIDENCE_TITLE, MESSAGES } from '@portal/contracts';
import type { ApiClient } from '../support/api-client.js';
import type { NewParticipant } from '../support/accounts.js';
import { CHROMIUM_MISSING_REASON, OpenPages, chromiumMissing, launchBrowser } from '../support/browser.js';
import type { EvidenceItem } from '../support/evidence.js';
import { startTestPortal, type TestPortal } from '../support/portal.js';

const CHUNK = 5 * 1024 * 1024;

let portal: TestPortal;
let browser: Browser;
let workDir: string;
/** About 11 MiB: three 5 MiB chunks, so that progress and interruptions have room. */
let bigPhoto: string;
let bigPhotoSize: number;
let notMedia: string;
const pages = new OpenPages(() => ({ browser, url: portal.url }));

beforeAll(async () => {
  workDir = mkdtempSync(join(tmpdir(), 'evidence-e2e-'));
  const noise = sharp({
    create: { width: 2200, height: 2200, channels: 3, background: { r: 0, g: 0, b: 0 }, noise: { type: 'gaussian', mean: 128, sigma: 70 } },
  });
  const photo = await noise.jpeg({ quality: 100, chromaSubsampling: '4:4:4' }).toBuffer();
  bigPhoto = join(workDir, 'harbour.jpg');
  bigPhotoSize = photo.length;
  if (bigPhotoSize <= 2 * CHUNK || bigPhotoSize > 3 * CHUNK) throw new Error(`the photo should be three chunks, not ${bigPhotoSize} bytes`);
  writeFileSync(bigPhoto, photo);
  notMedia = join(workDir, 'minutes.jpg');
  writeFileSync(notMedia, 'minutes of the meeting, not a photo at all\n'.repeat(200));
  [portal, browser] = await Promise.all([
    startTestPortal(),
    chromiumMissing ? Promise.resolve(undefined as unknown as Browser) : launchBrowser(),
  ]);
}, 120_000);

afterAll(async () => {
  await browser?.close();
  await portal?.dispose();
  rmSync(workDir, { recursive: true, force: true });
});

afterEach(async () => {
  // Nothing broke in the pages (a refused upload and a refused microphone are logged on purpose,
  // and so are the failed requests the tests provoke).
  const errors = await pages.closeAll();
  expect(
    errors.filter(
      (error) => !/evidence entry failed|microphone denied|Failed to load resource|ERR_INTERNET_DISCONNECTED|net::/.test(error),
    ),
  ).toEqual([]);
});

/** A participant who has watched the video, and a phone signed in as them. */
async function signedInPhone(): Promise<{ page: Page; context: BrowserContext; participant: NewParticipant }> {
  const { page, participant } = await pages.signedInPage();
  return { page, context: page.context(), participant };
}

async function ownItems(client: ApiClient): Promise<EvidenceItem[]> {
  const response = await client.get('/api/evidence?limit=100');
  expect(response.status).toBe(200);
  return response.data as EvidenceItem[];
}

/** The red plus button, then one of its options. */
async function addEvidence(page: Page, option: 'Camera' | 'Audio' | 'Notes'): Promise<void> {
  await page.getByRole('button', { name: 'Add evidence' }).click();
  await page.getByRole('menuitem', { name: option }).click();
}

async function chooseFile(page: Page, button: string, path: string): Promise<void> {
  const [chooser] = await Promise.all([page.waitForEvent('filechooser'), page.getByRole('button', { name: button }).click()]);
  await chooser.setFiles(path);
}

/**
 * Records what the upload screen shows while it works: every value of the progress bar, and
 * whether the warning, the words saying the capture is kept on the phone and the disabled
 * button were there with it.
 */
async function recordUploadScreen(page: Page): Promise<void> {
  await page.evaluate(() => {
    const seen: { value: number; warning: boolean; kept: boolean; disabled: boolean }[] = [];
    (window as unknown as { __progress: typeof seen }).__progress = seen;
    const look = () => {
      const bar = document.querySelector('[role="progressbar"][aria-label="Upload progress"]');
      if (!bar) return;
      const value = Number(bar.getAttribute('aria-valuenow'));
      if (seen.at(-1)?.value === value) return;
      const button = [...document.querySelectorAll('button')].find((element) => element.textContent?.trim() === 'Upload Evidence');
      const text = document.body.innerText;
      seen.push({
        value,
        warning: text.includes('DO NOT CLOSE OUT OF THIS SCREEN'),
        kept: text.includes('Saved on this phone: if you leave this screen'),
        disabled: button?.disabled ?? false,
      });
    };
    new MutationObserver(look).observe(document.body, {
      subtree: true,
      childList: true,
      attributes: true,
      attributeFilter: ['aria-valuenow'],
    });
  });
}

function recordedProgress(page: Page) {
  return page.evaluate(
    () => (window as unknown as { __progress: { value: number; warning: boolean; kept: boolean; disabled: boolean }[] }).__progress,
  );
}

/** An own card by the full title in its accessible name. */
function card(page: Page, title: string) {
  return page.locator('li[data-evidence-id]').filter({ has: page.getByRole('button', { name: new RegExp(`: ${title}`) }) });
}

describe.skipIf(chromiumMissing)('evidence screens of a participant (Chromium, phone)', () => {
  if (chromiumMissing) console.warn(CHROMIUM_MISSING_REASON);

  it('uploads a photo from a file with a moving progress bar; the list follows it until it is ready', async () => {
    const { page, participant } = await signedInPhone();
    await page.goto('/evidence');
    await page.getByRole('heading', { level: 1, name: 'Evidence' }).waitFor();
    // Nothing yet: the welcome text and how to upload.
    await page.getByText('You have not added any evidence yet.').waitFor();
    await page.getByText('Press the red plus button at the bottom right of the screen.').waitFor();

    await addEvidence(page, 'Camera');
    await page.waitForURL('**/evidenceupload');
    for (const name of ['Upload File', 'Take Picture', 'Record Video']) await page.getByRole('button', { name }).waitFor();
    // Take Picture opens the camera directly; Record Video too.
    expect(await page.locator('input[type=file][capture=environment][accept="image/*"]').count()).toBe(1);
    expect(await page.locator('input[type=file][capture=environment][accept="video/*"]').count()).toBe(1);
    await chooseFile(page, 'Upload File', bigPhoto);

    await page.waitForURL('**/evidence-details');
    await page.getByRole('img', { name: 'The chosen picture' }).waitFor();
    const title = page.getByRole('textbox', { name: 'Title' });
    expect(await title.inputValue()).toBe(DEFAULT_EVIDENCE_TITLE);
    await title.fill('Harbour at night');
    await page.getByRole('textbox', { name: 'Notes' }).fill('Two men unloading crates from a boat.');
    await recordUploadScreen(page);
    await page.getByRole('button', { name: 'Upload Evidence' }).click();

    await page.getByText('Evidence uploaded. Taking you to your evidence…').waitFor();
    const doneAt = Date.now();
    const progress = await recordedProgress(page);
    // The bar moved through values between 0 and 100, never backwards, and ended full; while it
    // moved, the button was disabled and the screen said the capture is kept on the phone (so
    // SPEC's "do not close" warning, true only where closing would lose it, was not there).
    const values = progress.map((entry) => entry.value);
    expect(values.some((value) => value > 0 && value < 100)).toBe(true);
    expect(values.at(-1)).toBe(100);
    expect(values).toEqual([...values].sort((a, b) => a - b));
    expect(progress.filter((entry) => entry.value < 100).every((entry) => entry.kept && !entry.warning && entry.disabled)).toBe(true);
    expect(progress.every((entry) => entry.disabled)).toBe(true);

    // After 2 seconds: the own list.
    await page.waitForURL('**/evidence');
    expect(Date.now() - doneAt).toBeGreaterThan(1500);
    const item = card(page, 'Harbour at night');
    await item.waitFor();
    // The title cut at 8 characters plus ' ...'.
    // ('Harbour ' + ' ...': the two spaces read as one.)
    expect((await item.innerText()).split('\n')).toContain('Harbour ...');
    // Processing ends 'ready' (the list asks for the item until then), with a thumbnail.
    await page.locator('li[data-media-status="ready"]').filter({ hasText: 'Harbour ' }).waitFor({ timeout: 30_000 });
    const thumbnail = item.locator('img');
    await expect.poll(() => thumbnail.evaluate((element: HTMLImageElement) => element.complete && element.naturalWidth > 0)).toBe(true);
    expect(await thumbnail.getAttribute('src')).toMatch(/\/thumb/);
    expect(await thumbnail.getAttribute('loading')).toBe('lazy');

    // The detail dialog: the display media, title, notes, no location, the date posted.
    await item.getByRole('button').click();
    const dialog = page.getByRole('dialog', { name: 'Harbour at night' });
    await dialog.waitFor();
    const picture = dialog.getByRole('img', { name: 'Harbour at night' });
    expect(await picture.getAttribute('src')).toMatch(/\/display/);
    await dialog.getByText('Two men unloading crates from a boat.').waitFor();
    await dialog.getByText('Location: Not given').waitFor();
    await dialog.getByText(/^Posted [A-Z][a-z]{2} \d{1,2}, \d{4}, \d{1,2}:\d{2}\s?[AP]M$/).waitFor();
    expect(await dialog.getByText('Public', { exact: true }).count()).toBe(0);

    const [stored] = await ownItems(participant.client);
    expect(stored).toMatchObject({ title: 'Harbour at night', media_type: 2, media_status: 'ready', is_public: false });
  });

  it('records sound with the microphone (a refusal explained; timer, pause and resume), adds the location, and uploads it', async () => {
    const { page, context, participant } = await signedInPhone();
    await context.grantPermissions(['camera', 'microphone', 'geolocation']);
    await context.setGeolocation({ latitude: 40.7128, longitude: -74.006, accuracy: 15 });
    await page.goto('/evidence');
    await addEvidence(page, 'Audio');
    await page.waitForURL('**/evidenceupload');
    await page.getByRole('button', { name: 'Upload Audio' }).waitFor();
    expect(await page.locator('input[type=file][accept="audio/*"]').count()).toBe(1);

    // A refused microphone is logged and explained (the first try here is refused).
    await page.evaluate(() => {
      const real = navigator.mediaDevices.getUserMedia.bind(navigator.mediaDevices);
      navigator.mediaDevices.getUserMedia = () => {
        navigator.mediaDevices.getUserMedia = real;
        return Promise.reject(new DOMException('Permission denied', 'NotAllowedError'));
      };
    });
    await page.getByRole('button', { name: 'Start Recording' }).click();
    await page.getByText(/The microphone was not allowed\. To record, allow this site to use the microphone/).waitFor();

    await page.getByRole('button', { name: 'Start Recording' }).click();
    const timer = page.getByRole('timer');
    await page.getByText('Recording…').waitFor();
    await expect.poll(async () => Number(await timer.getAttribute('data-seconds')), { timeout: 10_000 }).toBeGreaterThanOrEqual(1);
    await page.getByRole('button', { name: 'Pause' }).click();
    await page.getByText('Paused', { exact: true }).waitFor();
    await page.getByRole('button', { name: 'Resume' }).click();
    await expect.poll(async () => Number(await timer.getAttribute('data-seconds')), { timeout: 10_000 }).toBeGreaterThanOrEqual(2);
    expect(await timer.innerText()).toMatch(/^0:0[2-9]$/);
    await page.getByRole('button', { name: 'Save Recording' }).click();

    await page.waitForURL('**/evidence-details');
    const recording = page.locator('audio[aria-label="The recording"]');
    await recording.waitFor();
    expect(await recording.getAttribute('src')).toMatch(/^blob:/);
    await page.getByRole('textbox', { name: 'Title' }).fill('Street sounds');
    await page.getByRole('checkbox', { name: 'Add my location' }).check();
    await page.getByText('Location: 40.71280, -74.00600 (±15 m)').waitFor();
    await page.getByRole('button', { name: 'Upload Evidence' }).click();
    await page.waitForURL('**/evidence');

    await page.locator('li[data-media-status="ready"]').filter({ hasText: 'Street s ...' }).waitFor({ timeout: 30_000 });
    // The filter: only sound.
    await page.getByRole('button', { name: 'Audio', exact: true }).click();
    await expect.poll(() => page.locator('li[data-evidence-id]').count()).toBe(1);
    await card(page, 'Street sounds').getByRole('button').click();
    const dialog = page.getByRole('dialog', { name: 'Street sounds' });
    await dialog.getByText('Location: 40.71280, -74.00600 (±15 m)').waitFor();
    const player = dialog.locator('audio[controls]');
    expect(await player.getAttribute('src')).toMatch(/\/display/);
    await expect.poll(() => player.evaluate((element: HTMLAudioElement) => element.readyState >= 1 && element.duration > 1)).toBe(true);

    const [stored] = await ownItems(participant.client);
    expect(stored).toMatchObject({ title: 'Street sounds', media_type: 4, media_status: 'ready', location: '40.71280, -74.00600 (±15 m)' });
    expect(stored!.duration).toBeGreaterThan(1.5);
  });

  it('adds a note, edits it (a dialog that only its buttons close) and deletes it after confirmation', async () => {
    const { page, participant } = await signedInPhone();
    await page.goto('/evidence');
    await addEvidence(page, 'Notes');
    await page.waitForURL('**/evidence-details');
    await page.getByRole('textbox', { name: 'Title' }).fill('');
    await page.getByRole('button', { name: 'Upload Evidence' }).click();
    await page.getByText(MESSAGES.titleRequired).waitFor();
    await page.getByRole('textbox', { name: 'Title' }).fill('Man in the red hat');
    await page.getByRole('textbox', { name: 'Notes' }).fill('He read the same newspaper page for an hour.');
    await page.getByRole('button', { name: 'Upload Evidence' }).click();
    await page.waitForURL('**/evidence');

    const item = card(page, 'Man in the red hat');
    await item.getByText('Man in t ...').waitFor();
    await item.getByText('Note', { exact: true }).waitFor();
    await item.getByRole('button').click();
    let dialog = page.getByRole('dialog', { name: 'Man in the red hat' });
    await dialog.getByText('He read the same newspaper page for an hour.').waitFor();

    await dialog.getByRole('button', { name: 'Edit' }).click();
    const edit = page.getByRole('dialog', { name: 'Edit Evidence' });
    await edit.waitFor();
    // A note has no file to replace.
    expect(await edit.getByRole('button', { name: 'Replace File' }).count()).toBe(0);
    // Neither Escape nor a click beside it closes it.
    await page.keyboard.press('Escape');
    await page.mouse.click(5, 5);
    await edit.getByRole('textbox', { name: 'Title' }).waitFor();
    await edit.getByRole('textbox', { name: 'Title' }).fill('Man in the blue hat');
    await edit.getByRole('button', { name: 'Save' }).click();
    dialog = page.getByRole('dialog', { name: 'Man in the blue hat' });
    await dialog.waitFor();
    expect((await ownItems(participant.client))[0]?.title).toBe('Man in the blue hat');

    await dialog.getByRole('button', { name: 'Delete' }).click();
    const confirm = page.getByRole('dialog', { name: 'Confirm Delete' });
    await confirm.getByText('Are you sure you want to delete this evidence?').waitFor();
    await confirm.getByRole('button', { name: 'Cancel' }).click();
    await page.getByRole('dialog', { name: 'Man in the blue hat' }).getByRole('button', { name: 'Delete' }).click();
    await page.getByRole('dialog', { name: 'Confirm Delete' }).getByRole('button', { name: 'Confirm' }).click();
    await page.getByRole('alert').filter({ hasText: MESSAGES.evidenceDeleted }).waitFor();
    await page.getByText('You have not added any evidence yet.').waitFor();
    expect(await ownItems(participant.client)).toEqual([]);
  });

  it("says so when the list cannot load; explains a refused file in the server's words and keeps the form", async () => {
    const { page, participant } = await signedInPhone();
    await page.route('**/api/evidence?limit=*', (route) =>
      route.fulfill({ status: 503, contentType: 'application/json', body: '{"code":"internal","message":"down"}' }),
    );
    await page.goto('/evidence');
    await page.getByRole('alert').filter({ hasText: MESSAGES.evidenceLoadFailed }).waitFor();
    await page.unroute('**/api/evidence?limit=*');
    await page.getByRole('button', { name: 'Try again' }).click();
    await page.getByText('You have not added any evidence yet.').waitFor();

    await addEvidence(page, 'Camera');
    await chooseFile(page, 'Upload File', notMedia);
    await page.waitForURL('**/evidence-details');
    await page.getByRole('textbox', { name: 'Title' }).fill('Meeting minutes');
    await page.getByRole('button', { name: 'Upload Evidence' }).click();
    await page.getByRole('alert').filter({ hasText: MESSAGES.unsupportedEvidenceFile }).waitFor();
    expect(await page.getByRole('button', { name: 'Upload Evidence' }).isEnabled()).toBe(true);
    expect(await page.getByRole('textbox', { name: 'Title' }).inputValue()).toBe('Meeting minutes');
    expect(await ownItems(participant.client)).toEqual([]);
  });

  it('resumes an upload that went offline mid-way and lost the answer to its last PATCH: exactly one item', async () => {
    const { page, context, participant } = await signedInPhone();
    const requests: string[] = [];
    let released: (() => void) | null = null;
    const heldSecondChunk = new Promise<void>((resolve) => (released = resolve));
    let offlineAbort: (() => Promise<void>) | null = null;
    const secondChunkArrived = new Promise<void>((resolve) => {
      void page.route('**/api/evidence/uploads/**', async (route: Route) => {
        const request = route.request();
        const offset = Number((await request.allHeaders())['upload-offset'] ?? -1);
        requests.push(`${request.method()} ${request.method() === 'PATCH' ? offset : ''}`.trim());
        if (request.method() !== 'PATCH') return route.continue();
        if (offset === CHUNK && !offlineAbort) {
          // The phone loses its connection while the second chunk is on the way.
          offlineAbort = async () => {
            await route.abort('internetdisconnected').catch(() => undefined);
          };
          resolve();
          await heldSecondChunk;
          return;
        }
        if (offset + CHUNK >= bigPhotoSize) {
          // The last chunk arrives and the item is made, but its answer never reaches the phone.
          await route.fetch();
          return route.abort('connectionreset');
        }
        return route.continue();
      });
    });

    await page.goto('/evidence');
    await addEvidence(page, 'Camera');
    await chooseFile(page, 'Upload File', bigPhoto);
    await page.waitForURL('**/evidence-details');
    await page.getByRole('textbox', { name: 'Title' }).fill('Crates on the quay');
    await page.getByRole('button', { name: 'Upload Evidence' }).click();

    await secondChunkArrived;
    await context.setOffline(true);
    await offlineAbort!();
    released!();
    await page.getByText('Waiting for the connection… The upload will go on by itself.').waitFor();
    await page.getByText('Saved on this phone: if you leave this screen, it will upload by itself later.').waitFor();
    expect(await page.getByText(MESSAGES.doNotClose).count()).toBe(0);
    await context.setOffline(false);

    await page.getByText('Evidence uploaded. Taking you to your evidence…').waitFor({ timeout: 30_000 });
    await page.waitForURL('**/evidence');
    await card(page, 'Crates on the quay').waitFor();
    expect(await card(page, 'Crates on the quay').count()).toBe(1);

    // It went on from what the server had (HEAD, then the second chunk again, not the first),
    // and after the lost answer it asked once more (HEAD) instead of sending a second copy.
    const patches = requests.filter((entry) => entry.startsWith('PATCH')).map((entry) => Number(entry.split(' ')[1]));
    expect(patches.filter((offset) => offset === 0)).toHaveLength(1);
    expect(patches.filter((offset) => offset === CHUNK)).toHaveLength(2);
    const lastPatch = requests.lastIndexOf(`PATCH ${patches.at(-1)}`);
    expect(requests.slice(lastPatch + 1)).toContain('HEAD');
    const firstResume = requests.indexOf(`PATCH ${CHUNK}`, requests.indexOf(`PATCH ${CHUNK}`) + 1);
    expect(requests.slice(0, firstResume)).toContain('HEAD');

    const items = (await ownItems(participant.client)).filter((entry) => entry.title === 'Crates on the quay');
    expect(items).toHaveLength(1);
    expect(items[0]!.media_type).toBe(2);
  });
});
