// The foundation screens in Chromium, against a whole portal: registration (photo from the files
// or a selfie from the fake camera), the onboarding video (its 3-second controls rule, a video
// that did not arrive) and its acknowledgement, login and its three error messages, logout, the
// profile's edit view, the navigation menu of each kind of person (and its lock before the
// video), the administrator's page, protected pages and the 404 page.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { MESSAGES } from '@portal/contracts';
import { newParticipant } from '../support/accounts.js';
import { CHROMIUM_MISSING_REASON, OpenPages, alertWith, chromiumMissing, logIn, startWithBrowser } from '../support/browser.js';
import { phoneJpeg } from '../support/media.js';
import { TEST_ADMIN, startTestPortal, type TestPortal } from '../support/portal.js';

const PRODUCT = 'Operation Test';
const SPY_ON_URL = 'https://example.org/spy-on-operation-test';

let portal: TestPortal;
let browser: Browser;
let workDir: string;
let photoPath: string;
const pages = new OpenPages(() => ({ browser, url: portal.url }));

/** A page of a new phone (or desktop) context, closed after the test; its errors are collected. */
const openPage = (kind: 'phone' | 'desktop' = 'phone') => pages.open(kind);

let counter = 0;
function uniqueName(prefix: string): string {
  counter += 1;
  return `${prefix}_${Date.now().toString(36)}${counter}`;
}

/** Fills 'Register User' with valid values and presses Register; answers the account's names. */
async function fillRegistration(page: Page, prefix: string) {
  const username = uniqueName(prefix);
  const email = `${username}@example.org`;
  await page.goto('/registration');
  await page.getByRole('heading', { name: 'Register User' }).waitFor();
  await page.getByRole('textbox', { name: 'Full Name' }).fill('Ida Informant');
  await page.getByRole('textbox', { name: 'Username' }).fill(username);
  await page.getByRole('combobox', { name: 'Pronouns' }).selectOption('They/Them');
  await page.getByRole('textbox', { name: 'Email', exact: true }).fill(email);
  await page.getByRole('textbox', { name: 'Phone Number', exact: true }).fill('5551234567');
  await page.getByRole('textbox', { name: 'Confirm Phone Number' }).fill('5551234567');
  await page.getByRole('textbox', { name: 'Password', exact: true }).fill('password1');
  await page.getByRole('textbox', { name: 'Confirm Password' }).fill('password1');
  await page.getByRole('checkbox', { name: /I accept the participation terms/ }).check();
  await page.getByRole('button', { name: 'Register', exact: true }).click();
  return { username, email, password: 'password1' };
}

/** The signed-in user as the server sees the browser's session (null when signed out). */
function serverUser(page: Page): Promise<{
  username: string;
  video_watched: boolean;
  verification_photo: boolean;
  verification_photo_AWS_URL: string | null;
  terms_version: string | null;
} | null> {
  return page.evaluate(async () => {
    const response = await fetch('/api/user');
    return response.ok ? response.json() : null;
  });
}

async function openMenu(page: Page): Promise<string[]> {
  await page.getByRole('button', { name: 'Menu' }).click();
  const menu = page.getByRole('menu');
  await menu.waitFor();
  return (await menu.getByRole('menuitem').allTextContents()).map((text) => text.trim());
}

async function closeMenu(page: Page): Promise<void> {
  await page.keyboard.press('Escape');
  await page.getByRole('menu').waitFor({ state: 'detached' });
}

/** The opacity the element is drawn with: its own times its ancestors'. */
function effectiveOpacity(page: Page, selector: Parameters<Page['locator']>[0]): Promise<number> {
  return page
    .locator(selector)
    .first()
    .evaluate((element) => {
      let opacity = 1;
      for (let node: Element | null = element; node; node = node.parentElement) opacity *= Number(getComputedStyle(node).opacity);
      return opacity;
    });
}

// A browser test waits on a real browser and a real portal: more time than the default on a busy 2-core machine.
describe.skipIf(chromiumMissing)(
  chromiumMissing ? `foundation screens (skipped: ${CHROMIUM_MISSING_REASON})` : 'foundation screens',
  { timeout: 60_000 },
  () => {
    beforeAll(async () => {
      workDir = mkdtempSync(join(tmpdir(), 'portal-e2e-'));
      photoPath = join(workDir, 'face.jpg');
      writeFileSync(photoPath, await phoneJpeg());
      // Both at once; if one fails, the other is stopped.
      ({ portal, browser } = await startWithBrowser(startTestPortal({ PRODUCT_NAME: PRODUCT, SPY_ON_URL })));
    });

    afterAll(async () => {
      await browser?.close();
      await portal?.dispose();
      if (workDir) rmSync(workDir, { recursive: true, force: true });
    });

    afterEach(async ({ task }) => {
      if (task.result?.state === 'fail') await pages.report();
      // Failed loads are expected (401 for a visitor's GET /api/user, the 404 page, an aborted
      // request); anything else the page reports is a bug.
      const errors = (await pages.closeAll()).filter((error) => !error.includes('Failed to load resource'));
      expect(errors).toEqual([]);
    });

    it('registers with a photo from the files, plays the onboarding video to the acknowledgement and shows the instructions', async () => {
      const page = await openPage();
      const account = await fillRegistration(page, 'files');

      const photoDialog = page.getByRole('dialog', { name: 'Verification Photo' });
      await photoDialog.waitFor();
      await photoDialog.getByText('used for internal identification only; not shared publicly or outside the team').waitFor();
      const submit = photoDialog.getByRole('button', { name: 'Submit Photo and Register' });
      expect(await submit.isDisabled()).toBe(true);
      const [chooser] = await Promise.all([
        page.waitForEvent('filechooser'),
        photoDialog.getByRole('button', { name: 'Choose from Files' }).click(),
      ]);
      await chooser.setFiles(photoPath);
      await photoDialog.getByRole('img', { name: 'Your chosen photo' }).waitFor();
      await submit.click();

      await alertWith(page, MESSAGES.newUserCreated).waitFor();
      await page.waitForURL('**/user');
      const me = await serverUser(page);
      expect(me).toMatchObject({ username: account.username, verification_photo: true, video_watched: false, terms_version: '1' });

      // The welcome dialog cannot be dismissed.
      const welcome = page.getByRole('dialog', { name: `Welcome to ${PRODUCT}` });
      await welcome.waitFor();
      await page.keyboard.press('Escape');
      expect(await welcome.isVisible()).toBe(true);

      // No native controls before 3 seconds of playback: only the Play/Pause button. The page itself
      // notes when the controls appear, and pauses the video once at 0.5 s, so that what is checked
      // does not depend on how fast this test process is.
      const video = welcome.getByLabel('Onboarding video');
      await video.evaluate((element: HTMLVideoElement) => {
        const record = window as unknown as { unlockedAt?: number };
        new MutationObserver(() => {
          if (element.controls && record.unlockedAt === undefined) record.unlockedAt = element.currentTime;
        }).observe(element, { attributes: true, attributeFilter: ['controls'] });
        const pauseOnce = () => {
          if (element.currentTime < 0.5) return;
          element.removeEventListener('timeupdate', pauseOnce);
          element.pause();
        };
        element.addEventListener('timeupdate', pauseOnce);
      });
      expect(await video.evaluate((element: HTMLVideoElement) => element.controls)).toBe(false);
      await welcome.getByRole('button', { name: 'Play' }).click();
      await page.waitForFunction(() => {
        const element = document.querySelector('video[aria-label="Onboarding video"]') as HTMLVideoElement;
        return element.paused && element.currentTime >= 0.5;
      });
      const early = await video.evaluate((element: HTMLVideoElement) => ({ time: element.currentTime, controls: element.controls }));
      expect(early.time).toBeLessThan(3);
      expect(early.controls).toBe(false);
      // Paused before 3 s: still no controls, and the custom button plays on.
      await welcome.getByRole('button', { name: 'Play' }).click();
      await welcome.getByRole('button', { name: 'Pause' }).waitFor();

      // Debian's Chromium decodes the bundled H.264 MP4 (not a fallback).
      const played = await video.evaluate((element: HTMLVideoElement) => ({
        src: element.currentSrc,
        width: element.videoWidth,
        error: element.error?.code ?? null,
      }));
      expect(played).toMatchObject({ width: 640, error: null });
      expect(played.src).toMatch(/\/onboarding\/onboarding\.mp4$/);

      // Past 3 seconds the native controls appear, and the custom button goes (SPEC).
      await page.waitForFunction(
        () => (document.querySelector('video[aria-label="Onboarding video"]') as HTMLVideoElement).controls,
        null,
        { timeout: 10_000 },
      );
      const unlockedAt = await page.evaluate(() => (window as unknown as { unlockedAt?: number }).unlockedAt);
      expect(unlockedAt).toBeGreaterThan(3);
      await welcome.getByRole('button', { name: /^(Play|Pause)$/ }).waitFor({ state: 'detached' });

      // The rest of the video, sped up.
      await video.evaluate((element: HTMLVideoElement) => {
        element.playbackRate = 4;
        element.currentTime = element.duration - 0.4;
      });
      const acknowledgement = page.getByRole('dialog', { name: 'Video Instruction Acknowledgement' });
      await acknowledgement.waitFor();
      // 'Rewatch Video' closes it and plays the video again from the start.
      await acknowledgement.getByRole('button', { name: 'Rewatch Video' }).click();
      await acknowledgement.waitFor({ state: 'detached' });
      await page.waitForFunction(() => {
        const element = document.querySelector('video[aria-label="Onboarding video"]') as HTMLVideoElement;
        return !element.paused && element.currentTime < 5;
      });
      await video.evaluate((element: HTMLVideoElement) => {
        element.currentTime = element.duration - 0.4;
      });
      await acknowledgement.getByRole('button', { name: 'I understand' }).click();

      await page.waitForURL('**/home-validate');
      await page.getByRole('heading', { level: 1, name: `Welcome, ${account.username}` }).waitFor();
      await page.getByText('Thank you for agreeing to be an informant').waitFor();
      await page.getByText('review the training video under the HELP tab').waitFor();
      expect(await welcome.count()).toBe(0);
      expect((await serverUser(page))?.video_watched).toBe(true);

      await page.goto('/home');
      await page.getByRole('heading', { level: 1, name: `Welcome, ${account.username}` }).waitFor();
      await page.getByText('Use the menu icon at the top right').waitFor();
      // Unlocked: the menu opens, and the profile no longer shows the video.
      expect(await openMenu(page)).toContain('Logout');
      await closeMenu(page);
      await page.goto('/user');
      await page.getByRole('heading', { level: 1, name: `${account.username} (They/Them)` }).waitFor();
      await page.getByRole('button', { name: 'Edit Profile' }).waitFor();
      expect(await page.getByRole('dialog').count()).toBe(0);
    });

    it('offers to load the onboarding video again when it did not arrive', async () => {
      const page = await openPage();
      const { user, password } = await newParticipant(portal.url, {}, undefined, { watched: false });
      let arrive = false;
      await page.route('**/onboarding/onboarding.mp4', (route) => (arrive ? route.continue() : route.abort('connectionreset')));
      await logIn(page, user.username, password);
      await page.waitForURL('**/user');
      const welcome = page.getByRole('dialog', { name: `Welcome to ${PRODUCT}` });
      await welcome.getByText('The video could not be loaded').waitFor();
      arrive = true;
      await welcome.getByRole('button', { name: 'Try Again' }).click();
      await welcome.getByRole('button', { name: 'Play' }).click();
      await page.waitForFunction(
        () => (document.querySelector('video[aria-label="Onboarding video"]') as HTMLVideoElement).currentTime > 0.2,
      );
      expect(await welcome.getByText('The video could not be loaded').count()).toBe(0);
    });

    it('registers with a selfie from the camera', async () => {
      const page = await openPage();
      const account = await fillRegistration(page, 'selfie');
      const photoDialog = page.getByRole('dialog', { name: 'Verification Photo' });
      await photoDialog.getByRole('button', { name: 'Take a Selfie' }).click();
      await photoDialog.getByRole('button', { name: 'Capture Photo' }).click();
      await photoDialog.getByRole('img', { name: 'Your chosen photo' }).waitFor();
      await photoDialog.getByRole('button', { name: 'Submit Photo and Register' }).click();

      await page.waitForURL('**/user');
      await page.getByRole('dialog', { name: `Welcome to ${PRODUCT}` }).waitFor();
      const me = await serverUser(page);
      expect(me).toMatchObject({ username: account.username, verification_photo: true });
      // The captured frame was stored as a picture.
      const photo = await page.evaluate(async (url) => {
        const response = await fetch(url);
        return { status: response.status, type: response.headers.get('content-type'), size: (await response.arrayBuffer()).byteLength };
      }, me!.verification_photo_AWS_URL!);
      expect(photo.status).toBe(200);
      expect(photo.type).toMatch(/^image\//);
      expect(photo.size).toBeGreaterThan(1000);
    });

    it('shows the three login error messages', async () => {
      const page = await openPage();
      const { user } = await newParticipant(portal.url);
      await page.goto('/login');
      await page.getByRole('button', { name: 'Login', exact: true }).click();
      await alertWith(page, MESSAGES.loginInput).waitFor();

      await logIn(page, user.username, 'not-the-password');
      await alertWith(page, MESSAGES.loginMismatch).waitFor();

      await page.route('**/api/user/login', (route) => route.abort('connectionrefused'));
      await logIn(page, user.username, 'password1');
      await alertWith(page, MESSAGES.loginNoServer).waitFor();
      expect(page.url()).toMatch(/\/login$/);
    });

    it('logs in and out', async () => {
      const page = await openPage();
      const { user, password } = await newParticipant(portal.url);
      await page.goto('/home');
      await page.getByRole('link', { name: 'Login' }).click();
      await page.waitForURL('**/login');
      const historyBefore = await page.evaluate(() => history.length);
      await page.getByRole('textbox', { name: 'Username or Email' }).fill(user.username);
      await page.getByRole('textbox', { name: 'Password' }).fill(password);
      await page.getByRole('button', { name: 'Login', exact: true }).click();
      await page.waitForURL('**/home');
      await page.getByRole('heading', { level: 1, name: `Welcome, ${user.username}` }).waitFor();
      // The login page left the history: Back goes to where the visitor came from, not to /login.
      expect(await page.evaluate(() => history.length)).toBe(historyBefore);
      // A signed-in person is sent away from the login and registration pages.
      await page.goto('/login');
      await page.waitForURL('**/home');
      await page.goto('/registration');
      await page.waitForURL('**/user');

      await openMenu(page);
      await page.getByRole('menuitem', { name: 'Logout' }).click();
      await page.getByText('If you are participating in the investigation, please register or login.').waitFor();
      expect(new URL(page.url()).pathname).toMatch(/^\/(home)?$/);
      expect(await serverUser(page)).toBeNull();

      // Log Out on the profile page too.
      await logIn(page, user.username, password);
      await page.waitForURL('**/home');
      await page.goto('/user');
      await page.getByRole('button', { name: 'Log Out' }).click();
      await page.getByText('(Do NOT register for an account unless you have a ticket)').waitFor();
      expect(await serverUser(page)).toBeNull();
    });

    it('edits the profile: contact details, pronouns and a new avatar', async () => {
      const page = await openPage();
      const { user, password } = await newParticipant(portal.url);
      await logIn(page, user.username, password);
      await page.waitForURL('**/home');
      await page.goto('/user');
      await page.getByRole('heading', { level: 1, name: `${user.username} (They/Them)` }).waitFor();
      await page.getByRole('button', { name: 'Edit Profile' }).click();
      const phone = page.getByRole('textbox', { name: 'Phone Number' });
      await phone.fill('555-123');
      await page.getByRole('button', { name: 'Save Changes' }).click();
      await page.getByText(MESSAGES.phoneFormat).waitFor();

      await phone.fill('5559876543');
      await page.getByRole('combobox', { name: 'Pronouns' }).selectOption('');
      const [chooser] = await Promise.all([page.waitForEvent('filechooser'), page.getByRole('button', { name: 'Upload Avatar' }).click()]);
      await chooser.setFiles(photoPath);
      await page.getByRole('img', { name: 'Your new avatar' }).waitFor();
      await page.getByRole('button', { name: 'Save Changes' }).click();
      await page.getByText(MESSAGES.userUpdated).waitFor();
      await page.getByRole('heading', { level: 1, name: user.username, exact: true }).waitFor();
      await page.getByText('5559876543').waitFor();
      await page.getByText('Prefer not to say').waitFor();
      const avatar = await page.getByRole('img', { name: `Picture of ${user.username}` }).getAttribute('src');
      expect(avatar).toMatch(/\/avatar\?v=/);

      // Cancel leaves the profile as it was.
      await page.getByRole('button', { name: 'Edit Profile' }).click();
      await phone.fill('5550000000');
      await page.getByRole('button', { name: 'Cancel' }).click();
      await page.getByText('5559876543').waitFor();
      expect(await serverUser(page)).toMatchObject({ username: user.username });
    });

    it('shows the menu items of a visitor and of a participant, and locks the menu until the video is watched', async () => {
      const page = await openPage();
      await page.goto('/home');
      await page.getByText('If you are participating in the investigation, please register or login.').waitFor();
      expect(await openMenu(page)).toEqual(['Home', 'Archive', 'Register', 'Login']);
      await page.getByRole('menuitem', { name: 'Register' }).click();
      await page.waitForURL('**/registration');

      // A participant who has not watched the video: the menu is locked.
      const fresh = await newParticipant(portal.url, {}, undefined, { watched: false });
      await logIn(page, fresh.user.username, fresh.password);
      await page.waitForURL('**/user');
      await page.getByRole('dialog', { name: `Welcome to ${PRODUCT}` }).waitFor();
      await page.goto('/help');
      await page.getByRole('heading', { level: 1, name: 'Help' }).waitFor();
      const menuButton = page.getByRole('button', { name: 'Menu' });
      expect(await menuButton.isDisabled()).toBe(true);
      expect(await effectiveOpacity(page, 'header button[aria-label="Menu"]')).toBeCloseTo(0.5, 2);
      await page.getByTestId('menu-area').click();
      await alertWith(page, MESSAGES.mustWatchVideo).waitFor();
      expect(await page.getByRole('menu').count()).toBe(0);
      await page.getByRole('alert').getByRole('button', { name: 'Close' }).click();
      await alertWith(page, MESSAGES.mustWatchVideo).waitFor({ state: 'detached' });
      await page.getByRole('button', { name: `${fresh.user.username}: your profile` }).click();
      await alertWith(page, MESSAGES.mustWatchVideo).waitFor();
      expect(page.url()).toMatch(/\/help$/);
      // Home sends them back to the video.
      await page.goto('/home');
      await page.waitForURL('**/user');

      // A participant who has watched it.
      await page.context().clearCookies();
      const participant = await newParticipant(portal.url);
      await logIn(page, participant.user.username, participant.password);
      await page.waitForURL('**/home');
      expect(await effectiveOpacity(page, 'header button[aria-label="Menu"]')).toBe(1);
      expect(await openMenu(page)).toEqual(['Home', 'Evidence', 'Archive', 'Help', `Spy on ${PRODUCT}`, 'Logout']);
      const spyOn = page.getByRole('menuitem', { name: `Spy on ${PRODUCT}` });
      expect(await spyOn.getAttribute('href')).toBe(SPY_ON_URL);
      expect(await spyOn.getAttribute('target')).toBe('_blank');
      await page.getByRole('menuitem', { name: 'Help' }).click();
      await page.waitForURL('**/help');
      await page.getByRole('heading', { level: 1, name: 'Help' }).waitFor();
      // The avatar leads to the profile.
      await page.getByRole('button', { name: `${participant.user.username}: your profile` }).click();
      await page.waitForURL('**/user');
      await page.getByRole('button', { name: 'Edit Profile' }).waitFor();

      // The administration page is not theirs.
      await page.goto('/admin');
      await page.waitForURL('**/user');
    });

    it("shows an administrator the 'Admin Page' item and the administration page", async () => {
      const page = await openPage('desktop');
      await logIn(page, TEST_ADMIN.username, TEST_ADMIN.password);
      await page.waitForURL('**/home');
      expect(await openMenu(page)).toEqual(['Home', 'Evidence', 'Admin Page', 'Archive', 'Help', `Spy on ${PRODUCT}`, 'Logout']);
      await page.getByRole('menuitem', { name: 'Admin Page' }).click();
      await page.waitForURL('**/admin');
      // Not the login page, not sent to /user.
      await page.getByRole('heading', { level: 1 }).waitFor();
      expect(await page.getByRole('button', { name: 'Login', exact: true }).count()).toBe(0);
      expect(new URL(page.url()).pathname).toBe('/admin');
    });

    it('shows the login page in place of a protected page, and the 404 page for unknown paths', async () => {
      const page = await openPage();
      for (const path of ['/user', '/admin']) {
        await page.goto(path);
        await page.getByRole('heading', { level: 1, name: 'Login' }).waitFor();
        expect(new URL(page.url()).pathname).toBe(path);
      }
      // Logging in there goes on as a login does.
      const { user, password } = await newParticipant(portal.url);
      await page.goto('/user');
      await page.getByRole('textbox', { name: 'Username or Email' }).fill(user.email);
      await page.getByRole('textbox', { name: 'Password' }).fill(password);
      await page.getByRole('button', { name: 'Login', exact: true }).click();
      await page.waitForURL('**/home');

      for (const path of ['/no-such-page', '/home/', '/USER']) {
        const response = await page.goto(path);
        expect(response?.status()).toBe(404);
        await page.getByRole('heading', { level: 1, name: '404' }).waitFor();
      }
    });
  },
);
