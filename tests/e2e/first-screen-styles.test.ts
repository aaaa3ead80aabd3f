// The styles of each route's first screen come with its HTML (web/build/first-screen-styles.ts):
// the browser finds them in `<style data-emotion="css …">` and compiles none of them in React's
// first commit, which on a phone is one long task (Lighthouse's TBT). A style the build did not
// foresee is still made in the browser, so these tests check that the build foresaw the screens
// people open first, and that the page looks as it did.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { MESSAGES } from '@portal/contracts';
import { adminClient, newParticipant } from '../support/accounts.js';
import { CHROMIUM_MISSING_REASON, OpenPages, chromiumMissing, startWithBrowser } from '../support/browser.js';
import { uploadEvidence, waitForMedia } from '../support/evidence.js';
import { phoneJpeg } from '../support/media.js';
import { startTestPortal, type TestPortal } from '../support/portal.js';

let portal: TestPortal;
let browser: Browser;
const pages = new OpenPages(() => ({ browser, url: portal.url }));

/** What emotion holds in the page: the names the HTML brought, and the rules the browser made itself. */
async function emotionStyles(page: Page): Promise<{ fromHtml: number; madeHere: string[] }> {
  return page.evaluate(() => {
    const tags = [...document.querySelectorAll<HTMLStyleElement>('style[data-emotion]')];
    const fromHtml = tags
      .filter((tag) => tag.dataset.emotion!.startsWith('css '))
      .reduce((sum, tag) => sum + tag.dataset.emotion!.split(' ').length - 1, 0);
    // A style made in the browser goes into a tag of emotion's own, named by the key alone.
    const madeHere = tags
      .filter((tag) => tag.dataset.emotion === 'css')
      .flatMap((tag) => [...tag.sheet!.cssRules].map((rule) => rule.cssText));
    return { fromHtml, madeHere };
  });
}

describe.skipIf(chromiumMissing)('the first screen comes with the page', () => {
  if (chromiumMissing) console.warn(CHROMIUM_MISSING_REASON);

  beforeAll(async () => {
    ({ portal, browser } = await startWithBrowser(startTestPortal()));
  });

  afterAll(async () => {
    await browser?.close();
    await portal?.dispose();
  });

  afterEach(async ({ task }) => {
    if (task.result?.state === 'fail') await pages.report();
    expect((await pages.closeAll()).filter((error) => !error.includes('Failed to load resource'))).toEqual([]);
  });

  it("a visitor's pages compile no style in the browser: home, login, registration, help, a 404, and the archive empty and with a photo", async () => {
    const page = await pages.open('phone');
    const visits: [string, () => Promise<unknown>][] = [
      ['/home', () => page.getByText('please register or login').waitFor()],
      ['/login', () => page.getByRole('button', { name: 'Login' }).waitFor()],
      ['/registration', () => page.getByRole('button', { name: 'Register' }).waitFor()],
      ['/help', () => page.getByRole('heading', { level: 1 }).waitFor()],
      ['/no-such-page', () => page.getByRole('heading', { level: 1 }).waitFor()],
      ['/archive', () => page.getByText(MESSAGES.archiveEmpty).waitFor()],
    ];
    for (const [path, shown] of visits) {
      await page.goto(path);
      await shown();
      const styles = await emotionStyles(page);
      expect(styles.fromHtml, path).toBeGreaterThan(10);
      expect(styles.madeHere, path).toEqual([]);
    }

    // The archive with a published photo: its cards' styles too.
    const { client } = await newParticipant(portal.url);
    const folder = mkdtempSync(join(tmpdir(), 'first-screen-'));
    const photo = join(folder, 'photo.jpg');
    writeFileSync(photo, await phoneJpeg());
    const created = await uploadEvidence(client, photo, { title: 'Lantern parade' }, 'image/jpeg');
    rmSync(folder, { recursive: true, force: true });
    expect(created.status).toBe(201);
    await waitForMedia(client, (created.data as { id: string }).id);
    const admin = (await adminClient(portal.url)).client;
    expect((await admin.put('/api/evidence/visibility', { ids: [(created.data as { id: string }).id], is_public: true })).status).toBe(200);
    // A new phone: the first one may keep the empty list for as long as the archive's answers may be cached.
    const another = await pages.open('phone');
    await another.goto('/archive');
    await another.getByRole('button', { name: /Lantern parade/ }).waitFor();
    expect((await emotionStyles(another)).madeHere).toEqual([]);
  });

  it("asks for the archive's first page once, with the page: the app takes the answer the HTML preloaded", async () => {
    const page = await pages.open('phone');
    const asked: string[] = [];
    page.on('request', (request) => {
      if (new URL(request.url()).pathname === '/api/evidence/public') asked.push(request.url());
    });
    await page.goto('/archive');
    await page
      .getByRole('button', { name: /Lantern parade/ })
      .or(page.getByText(MESSAGES.archiveEmpty))
      .first()
      .waitFor();
    await page.waitForLoadState('networkidle');
    expect(asked).toHaveLength(1);
  });

  it("a participant's evidence page compiles no style in the browser, and the styles from the page apply", async () => {
    const { page } = await pages.signedInPage();
    await page.goto('/evidence');
    await page
      .getByRole('tab', { name: /Table/ })
      .or(page.getByRole('button', { name: /Add Evidence/i }))
      .first()
      .waitFor();
    expect((await emotionStyles(page)).madeHere).toEqual([]);
    // Drawn by the CSS that came with the HTML: the navigation bar's colour and the page's font.
    const bar = await page
      .locator('header')
      .first()
      .evaluate((header) => getComputedStyle(header).backgroundColor);
    expect(bar).toBe('rgb(31, 58, 95)');
  });
});
