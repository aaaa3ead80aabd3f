import { existsSync } from 'node:fs';
import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core';
import { newParticipant, type NewParticipant } from './accounts.js';
import { expect } from 'vitest';
import { requirePrerequisite } from './required-suites.js';

/**
 * Debian's Chromium headless shell (package chromium-headless-shell), when it is installed: the
 * browser Playwright itself runs headless tests in, the same engine without the desktop
 * browser's windowing layers, which uses about a quarter less CPU per test file here. Debian's
 * Chromium otherwise, or whatever CHROMIUM_PATH names (npm cannot download browsers here).
 */
const HEADLESS_SHELL = '/usr/lib/chromium/chromium-headless-shell';
export const CHROMIUM_PATH = process.env.CHROMIUM_PATH ?? (existsSync(HEADLESS_SHELL) ? HEADLESS_SHELL : '/usr/bin/chromium');
/** The headless shell is headless only; the full browser is asked for its new headless mode. */
const HEADLESS_FLAG = CHROMIUM_PATH.endsWith('chromium-headless-shell') ? '--headless' : '--headless=new';

export const chromiumMissing = !existsSync(CHROMIUM_PATH);
export const CHROMIUM_MISSING_REASON = `Chromium not found at ${CHROMIUM_PATH}: install it (sudo apt-get install -y --no-install-recommends chromium-headless-shell, or chromium) or set CHROMIUM_PATH. Browser tests skipped.`;

const WEB_INDEX = new URL('../../web/dist/index.html', import.meta.url);

/** The built app must exist: the gateway serves web/dist. */
export function assertWebBuilt(): void {
  if (!existsSync(WEB_INDEX)) throw new Error('web/dist is missing: run npm run build first (npm test does).');
}

if (chromiumMissing) {
  requirePrerequisite(CHROMIUM_MISSING_REASON);
  console.warn(CHROMIUM_MISSING_REASON);
}

/**
 * How long a locator waits. Against the distributed portal every request crosses processes and a
 * 2-core machine also runs Kafka, MongoDB, Redis and S3, so waits get more room there.
 */
const WAIT_MS = process.env.PORTAL_TEST_MODE === 'distributed' ? 30_000 : 15_000;

/**
 * Headless Chromium as the probe of this machine kind runs it, with a fake camera and microphone
 * that need no permission prompt, and media allowed to autoplay.
 */
export async function launchBrowser(): Promise<Browser> {
  assertWebBuilt();
  return chromium.launch({
    executablePath: CHROMIUM_PATH,
    args: [
      HEADLESS_FLAG,
      '--no-sandbox',
      '--disable-gpu',
      '--disable-dev-shm-usage',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
      '--no-first-run',
      '--disable-quic',
      '--use-fake-device-for-media-stream',
      '--use-fake-ui-for-media-stream',
      '--autoplay-policy=no-user-gesture-required',
    ],
  });
}

/**
 * Whether the app's service worker runs. Blocked unless a test is about it: with it, the app's
 * files and the onboarding video come from its cache, which the network interceptions of the
 * other tests (page.route) do not see.
 */
export interface ContextOptions {
  serviceWorkers?: 'allow' | 'block';
  /** The device's own time zone (IANA), e.g. a phone on another continent than the event. */
  timezoneId?: string;
}

/** A phone: 390x844, touch, a mobile user agent, camera and microphone allowed. */
export async function phoneContext(browser: Browser, baseURL: string, options: ContextOptions = {}): Promise<BrowserContext> {
  const context = await browser.newContext({
    baseURL,
    serviceWorkers: options.serviceWorkers ?? 'block',
    viewport: { width: 390, height: 844 },
    ...(options.timezoneId ? { timezoneId: options.timezoneId } : {}),
    deviceScaleFactor: 2,
    isMobile: true,
    hasTouch: true,
    userAgent: 'Mozilla/5.0 (Linux; Android 14; Pixel 8) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/156.0.0.0 Mobile Safari/537.36',
    permissions: ['camera', 'microphone'],
  });
  context.setDefaultTimeout(WAIT_MS);
  return context;
}

/** A desktop window for administrators. */
export async function desktopContext(browser: Browser, baseURL: string, options: ContextOptions = {}): Promise<BrowserContext> {
  const context = await browser.newContext({
    baseURL,
    viewport: { width: 1280, height: 900 },
    ...(options.timezoneId ? { timezoneId: options.timezoneId } : {}),
    serviceWorkers: options.serviceWorkers ?? 'block',
  });
  context.setDefaultTimeout(WAIT_MS);
  return context;
}

/** Collects console errors and failed requests of a page, for assertions and for debugging. */
export function watchPage(page: Page): { errors: string[] } {
  const errors: string[] = [];
  page.on('pageerror', (error) => errors.push(`pageerror: ${error.message}`));
  page.on('console', (message) => {
    if (message.type() === 'error') errors.push(`console: ${message.text()}`);
  });
  return { errors };
}

/**
 * The browser contexts a test file opens, each page's errors collected: `open` a page, `report`
 * where each page was after a failure, `closeAll` after each test (answers the pages' errors).
 */
export class OpenPages {
  private readonly contexts: BrowserContext[] = [];
  private readonly watched: { errors: string[] }[] = [];

  /** `target` answers the browser and the portal's address once the file's beforeAll has them. */
  constructor(private readonly target: () => { browser: Browser; url: string }) {}

  /** A page of a new phone (or desktop) context, its session cookie set when one is given. */
  async open(kind: 'phone' | 'desktop' = 'phone', session?: string, options: ContextOptions = {}): Promise<Page> {
    const { browser, url } = this.target();
    const context = kind === 'phone' ? await phoneContext(browser, url, options) : await desktopContext(browser, url, options);
    this.contexts.push(context);
    if (session !== undefined) await context.addCookies([{ name: 'portal_session', value: session, url }]);
    const page = await context.newPage();
    this.watched.push(watchPage(page));
    return page;
  }

  /**
   * A new participant, registered and logged in through the API, who has watched the onboarding
   * video unless `watched: false`, and a page of a new phone signed in as them (their session
   * cookie copied): where a test starts that is not about registering or logging in.
   */
  async signedInPage(options: ContextOptions & { watched?: boolean } = {}): Promise<{ page: Page; participant: NewParticipant }> {
    const participant = await newParticipant(this.target().url, {}, undefined, { watched: options.watched ?? true });
    const page = await this.open('phone', participant.client.cookies.get('portal_session'), {
      serviceWorkers: options.serviceWorkers ?? 'block',
    });
    return { page, participant };
  }

  /** After a failure: where each page of the test was, what it showed and what it reported. */
  async report(): Promise<void> {
    const pages = this.contexts.flatMap((context) => context.pages());
    for (const [index, page] of pages.entries()) {
      const text = await page
        .locator('body')
        .innerText({ timeout: 2000 })
        .catch(() => '(no text)');
      console.error(
        `page ${index + 1}: ${page.url()}\n${text.slice(0, 1500)}\nerrors: ${JSON.stringify(this.watched[index]?.errors ?? [])}`,
      );
    }
  }

  /** Closes every context opened since the last call; answers what their pages reported. */
  async closeAll(): Promise<string[]> {
    await Promise.all(this.contexts.splice(0).map((context) => context.close()));
    return this.watched.splice(0).flatMap((watch) => watch.errors);
  }
}

/** The alert on the page that shows the text. */
/**
 * Nothing wider than the screen: long words and addresses wrap. Measured once every transition
 * has ended: while a panel opens (an accordion's answer, a dialog) it clips what it holds, so a
 * word too long for the screen only shows once it has opened.
 */
export async function fitsWidth(page: Page): Promise<void> {
  await page.waitForFunction(
    () =>
      document.getAnimations().length === 0 &&
      document.querySelector('.MuiCollapse-root:not(.MuiCollapse-entered):not(.MuiCollapse-hidden)') === null,
  );
  const { scrollWidth, clientWidth } = await page.evaluate(() => ({
    scrollWidth: document.documentElement.scrollWidth,
    clientWidth: document.documentElement.clientWidth,
  }));
  expect(scrollWidth, 'page width').toBeLessThanOrEqual(clientWidth);
}

export function alertWith(page: Page, text: string) {
  return page.getByRole('alert').filter({ hasText: text });
}

/** Signs in through the Login page's form. */
export async function logIn(page: Page, username: string, password: string): Promise<void> {
  await page.goto('/login');
  await page.getByRole('textbox', { name: 'Username or Email' }).fill(username);
  await page.getByRole('textbox', { name: 'Password' }).fill(password);
  await page.getByRole('button', { name: 'Login', exact: true }).click();
}

/**
 * Starts the portal and launches the browser at the same time. Answers both; if either fails,
 * whichever did start is stopped and the failure thrown.
 */
export async function startWithBrowser<P extends { dispose(): Promise<void> }>(
  starting: Promise<P>,
): Promise<{ portal: P; browser: Browser }> {
  const [started, launched] = await Promise.allSettled([starting, launchBrowser()]);
  if (started.status === 'fulfilled' && launched.status === 'fulfilled') return { portal: started.value, browser: launched.value };
  if (started.status === 'fulfilled') await started.value.dispose();
  if (launched.status === 'fulfilled') await launched.value.close();
  throw started.status === 'rejected' ? started.reason : (launched as PromiseRejectedResult).reason;
}
