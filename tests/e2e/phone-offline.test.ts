// A phone without a connection, as participants and visitors meet it (Chromium, 390x844, the
// installable app's service worker running): a visitor gets the app's frame and a clear offline
// state instead of a spinner; the details page says what is true about a capture kept on the
// phone; and logging out offline on a phone shared at the venue ends the session on that phone,
// so the next person is not signed in as the last one and the last one's captures are not sent
// under their name.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Page, Route } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MESSAGES } from '@portal/contracts';
import type { ApiClient } from '../support/api-client.js';
import { newParticipant } from '../support/accounts.js';
import { CHROMIUM_MISSING_REASON, alertWith, chromiumMissing, logIn } from '../support/browser.js';
import { phoneJpeg } from '../support/media.js';
import { OFFLINE_REQUEST_ERRORS, PhoneSuite, installedApp as installedAppOf, workerInControl } from '../support/phone.js';

let workDir: string;
let photo: string;
const phone = new PhoneSuite();
const { pages } = phone;

async function ownItems(client: ApiClient): Promise<{ title: string }[]> {
  const response = await client.get('/api/evidence?limit=100');
  expect(response.status).toBe(200);
  return response.data as { title: string }[];
}

/** A participant's phone with the app installed (the service worker in control unless blocked). */
const installedApp = (serviceWorkers: 'allow' | 'block' = 'allow') => installedAppOf(pages, serviceWorkers);

async function captureNote(page: Page, title: string): Promise<void> {
  await page.getByRole('button', { name: 'Add evidence' }).click();
  await page.getByRole('menuitem', { name: 'Notes' }).click();
  await page.waitForURL('**/evidence-details');
  await page.getByRole('textbox', { name: 'Title' }).fill(title);
  await page.getByRole('button', { name: 'Upload Evidence' }).click();
}

describe.skipIf(chromiumMissing)('a phone without a connection (Chromium, 390x844)', () => {
  if (chromiumMissing) console.warn(CHROMIUM_MISSING_REASON);

  beforeAll(async () => {
    workDir = mkdtempSync(join(tmpdir(), 'phone-offline-e2e-'));
    photo = join(workDir, 'gate.jpg');
    writeFileSync(photo, await phoneJpeg());
  }, 120_000);

  // Requests made offline or cut on purpose fail, and so does a logout sent offline; nothing else may.
  phone.start({ tolerated: new RegExp(`${OFFLINE_REQUEST_ERRORS.source}|logout failed`), timeoutMs: 120_000 });

  afterAll(() => {
    if (workDir) rmSync(workDir, { recursive: true, force: true });
  });

  it('shows a visitor offline the frame of the app and says they are offline, instead of loading for ever', async () => {
    const page = await pages.open('phone', undefined, { serviceWorkers: 'allow' });
    await page.goto('/home');
    await page.getByRole('link', { name: 'Login' }).first().waitFor();
    await workerInControl(page);
    await page.context().setOffline(true);
    await page.reload();
    await page.locator('header').getByRole('button', { name: 'Menu' }).waitFor();
    await page.getByRole('heading', { level: 1, name: 'You are offline' }).waitFor({ timeout: 8000 });
    expect(await page.getByText('Loading…').count()).toBe(0);
    // The pages that work offline are offered.
    await page.getByRole('link', { name: 'Archive' }).first().waitFor();
    // With the network back, the landing page comes by itself.
    await page.context().setOffline(false);
    await page.getByRole('link', { name: 'Login' }).first().waitFor();
    expect(await page.getByRole('heading', { level: 1, name: 'You are offline' }).count()).toBe(0);
  });

  it('says on the details page that the phone is offline before Upload is pressed', async () => {
    const { page, context } = await installedApp();
    await context.setOffline(true);
    await page.getByRole('button', { name: 'Add evidence' }).click();
    await page.getByRole('menuitem', { name: 'Notes' }).click();
    await page.waitForURL('**/evidence-details');
    const notice = page.getByText(
      'You are offline. Upload Evidence saves it on this phone, and it uploads by itself when the network is back.',
    );
    await notice.waitFor();
    await context.setOffline(false);
    await notice.waitFor({ state: 'detached' });
  });

  it('says a capture is saved on the phone when the upload call fails, and sends it once by itself', async () => {
    const { page, participant } = await installedApp('block');
    let refusedOnce = false;
    await page.route('**/api/evidence', async (route: Route) => {
      if (route.request().method() === 'POST' && !refusedOnce) {
        refusedOnce = true;
        return route.abort('connectionreset');
      }
      return route.continue();
    });
    await captureNote(page, 'Note when the call failed');
    await alertWith(page, 'Saved on this phone. The upload did not go through this time; it will be tried again by itself.').waitFor();
    await page.waitForURL('**/evidence');
    expect(await page.getByText('The evidence could not be saved').count()).toBe(0);
    await expect
      .poll(async () => (await ownItems(participant.client)).map((item) => item.title), { timeout: 30_000 })
      .toEqual(['Note when the call failed']);
    await page.waitForTimeout(1500);
    expect(await ownItems(participant.client)).toHaveLength(1);
  });

  it('keeps the progress in view on an 844 px screen, and warns "do not close" only when the capture is not kept on the phone', async () => {
    const { page } = await installedApp('block');
    // The chunk takes a while, so the screen can be read while it goes.
    await page.route('**/api/evidence/uploads/**', async (route: Route) => {
      if (route.request().method() === 'PATCH') await new Promise((resolve) => setTimeout(resolve, 2500));
      return route.continue();
    });
    const upload = async (title: string) => {
      await page.getByRole('button', { name: 'Add evidence' }).click();
      await page.getByRole('menuitem', { name: 'Camera' }).click();
      const [chooser] = await Promise.all([page.waitForEvent('filechooser'), page.getByRole('button', { name: 'Upload File' }).click()]);
      await chooser.setFiles(photo);
      await page.waitForURL('**/evidence-details');
      await page.getByRole('textbox', { name: 'Title' }).fill(title);
      await page.getByRole('textbox', { name: 'Notes' }).fill('Seen from the bridge, '.repeat(12));
      await page.getByRole('button', { name: 'Upload Evidence' }).click();
      const bar = page.getByRole('progressbar', { name: 'Upload progress' });
      await bar.waitFor();
      await expect
        .poll(async () => {
          const box = (await bar.boundingBox())!;
          return box.y >= 0 && box.y + box.height <= 844;
        })
        .toBe(true);
    };

    await upload('Kept on the phone');
    await page.getByText('Saved on this phone: if you leave this screen, it will upload by itself later.').waitFor();
    expect(await page.getByText(MESSAGES.doNotClose).count()).toBe(0);
    await page.waitForURL('**/evidence', { timeout: 30_000 });

    // A phone with no room left keeps nothing: leaving would lose the capture, so SPEC's warning stands.
    await page.evaluate(() => {
      Object.defineProperty(navigator.storage, 'estimate', { value: async () => ({ quota: 1000, usage: 900 }) });
    });
    await upload('Not kept on the phone');
    await page.getByText(MESSAGES.doNotClose).waitFor();
    await page.getByText("This phone's storage is full", { exact: false }).waitFor();
    expect(await page.getByText('Saved on this phone: if you leave this screen').count()).toBe(0);
    await page.waitForURL('**/evidence', { timeout: 30_000 });
  });

  // With the service worker (the installed app, a capture waiting) and without it (a browser that
  // has none, or before it is installed: the page itself holds the logout then).
  it.each(['allow', 'block'] as const)(
    'ends the session of whoever logs out offline on a shared phone: the next person is not signed in as them, and their capture is not sent (service worker: %s)',
    async (serviceWorkers) => {
      const { page, context, participant } = await installedApp(serviceWorkers);
      const withCapture = serviceWorkers === 'allow';
      if (!withCapture) {
        // The code of the home page and the menu, before the connection goes (nothing would serve it offline).
        await page.goto('/home');
        await page.getByRole('heading', { name: /^Welcome, / }).waitFor();
        await page.getByRole('button', { name: 'Menu' }).click();
        await page.getByRole('menu').waitFor();
        await page.keyboard.press('Escape');
      }
      await context.setOffline(true);
      if (withCapture) {
        await captureNote(page, 'Offline note before leaving');
        await page.waitForURL('**/evidence');
      }

      await page.getByRole('button', { name: 'Menu' }).click();
      await page.getByRole('menuitem', { name: 'Logout' }).click();
      if (withCapture) {
        // Logging out with a capture still waiting: the app says so first.
        const warning = page.getByRole('dialog', { name: 'Evidence still waiting' });
        await warning.getByText('1 piece of evidence has not been uploaded yet.', { exact: false }).waitFor();
        await warning.getByRole('button', { name: 'Log Out' }).click();
      }
      await page.waitForURL('**/home');
      await page.getByRole('heading', { level: 1, name: 'You are offline' }).waitFor();

      // The next person opens the app with the network back.
      await context.setOffline(false);
      const next = await context.newPage();
      await next.goto('/home');
      await next.getByRole('link', { name: 'Login' }).first().waitFor();
      expect(await next.evaluate(async () => (await (await fetch('/api/session')).json()) as unknown)).toEqual({ user: null });
      // The session itself is over on the server, not only forgotten by the app.
      await expect.poll(async () => (await participant.client.get('/api/user')).status, { timeout: 15_000 }).toBe(401);

      // Someone else signs in on the same phone: the last person's capture stays on the phone, unsent.
      const other = await newParticipant(phone.portal.url);
      await logIn(next, other.user.username, other.password);
      await next.waitForURL('**/home');
      await next.goto('/evidence');
      await next.getByRole('tab', { name: 'Table' }).waitFor();
      await next.waitForTimeout(2000);
      expect(await ownItems(other.client)).toEqual([]);
      const stored = await next.evaluate(
        () =>
          new Promise<{ title: string; state: string }[]>((resolve, reject) => {
            const open = indexedDB.open('evidence-outbox');
            open.onerror = () => reject(open.error);
            open.onsuccess = () => {
              const all = open.result.transaction('entries').objectStore('entries').getAll();
              all.onsuccess = () =>
                resolve((all.result as { title: string; state: string }[]).map(({ title, state }) => ({ title, state })));
            };
          }),
      );
      expect(stored).toEqual(withCapture ? [{ title: 'Offline note before leaving', state: 'waiting' }] : []);
      expect(await next.getByText('Offline note before leaving').count()).toBe(0);
    },
  );
});
