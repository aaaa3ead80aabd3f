// A participant's phone with the installable app, as the offline browser tests start from: the
// app's service worker in control of the page, and what a page made offline may log.
import type { BrowserContext, Page } from 'playwright-core';
import type { NewParticipant } from './accounts.js';
import type { OpenPages } from './browser.js';

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
