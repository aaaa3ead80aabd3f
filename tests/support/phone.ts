// The browser tests on phones: a file's portal, Chromium and pages started and checked the same
// way (PhoneSuite), and a participant's phone with the installable app, as the offline tests
// start from (the app's service worker in control of the page, and what a page made offline may log).
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, afterEach, beforeAll, expect } from 'vitest';
import type { NewParticipant } from './accounts.js';
import { OpenPages, startWithBrowser } from './browser.js';
import { startTestPortal, type TestPortal } from './portal.js';

/**
 * A test file's portal, browser and pages. Made at the top of the file (so that its helpers can
 * use `pages`); `start` in the describe block registers the hooks that start and check them.
 */
export class PhoneSuite {
  private started: { portal: TestPortal; browser: Browser } | undefined;
  /** The phones (and desktops) the tests open; closed after each test. */
  readonly pages = new OpenPages(() => ({ browser: this.browser, url: this.portal.url }));

  /** The all-in-one test portal, once beforeAll has started it. */
  get portal(): TestPortal {
    if (!this.started) throw new Error('the portal starts in beforeAll: use it inside a test or hook');
    return this.started.portal;
  }

  get browser(): Browser {
    if (!this.started) throw new Error('the browser starts in beforeAll: use it inside a test or hook');
    return this.started.browser;
  }

  /**
   * Registers, in the describe block that calls it: before all, the test portal (with `env`) and
   * Chromium started at once; after each test, where each page was if it failed, every page
   * closed, and no error logged by the pages but those `tolerated` (by default a request that
   * failed: a 4xx the test asked for); after all, both stopped.
   */
  start({
    env = {},
    tolerated = /Failed to load resource/,
    timeoutMs,
  }: { env?: Record<string, string>; tolerated?: RegExp; timeoutMs?: number } = {}): void {
    beforeAll(async () => {
      this.started = await startWithBrowser(startTestPortal(env));
    }, timeoutMs);

    afterAll(async () => {
      await this.started?.browser.close();
      await this.started?.portal.dispose();
    });

    afterEach(async ({ task }) => {
      if (task.result?.state === 'fail') await this.pages.report();
      const errors = await this.pages.closeAll();
      expect(errors.filter((error) => !tolerated.test(error))).toEqual([]);
    });
  }
}

/**
 * What pages log when requests go out without a network or are cut on purpose (the outbox keeps
 * the capture and says so in the console): the offline tests tolerate these, nothing else.
 */
export const OFFLINE_REQUEST_ERRORS =
  /Failed to load resource|ERR_INTERNET_DISCONNECTED|net::|outbox: sending failed|evidence entry failed/;

/** Waits until the app's service worker is active and controls the page (it then answers offline). */
export async function workerInControl(page: Page): Promise<void> {
  await page.evaluate(async () => {
    await navigator.serviceWorker.ready;
  });
  await page.waitForFunction(() => navigator.serviceWorker.controller !== null);
}

/**
 * A new participant's phone with the app installed: signed in, on their evidence page, and the
 * service worker active and in control (unless `serviceWorkers` is 'block': a browser without it).
 */
export async function installedApp(
  pages: OpenPages,
  serviceWorkers: 'allow' | 'block' = 'allow',
): Promise<{ page: Page; context: BrowserContext; participant: NewParticipant }> {
  const { page, participant } = await pages.signedInPage({ serviceWorkers });
  await page.goto('/evidence');
  await page.getByRole('tab', { name: 'Table' }).waitFor();
  if (serviceWorkers === 'allow') await workerInControl(page);
  return { page, context: page.context(), participant };
}
