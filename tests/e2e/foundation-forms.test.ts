// The foundation screens' forms and videos in Chromium, beyond the main journeys of
// foundation.test.ts: the registration warnings and the taken-username check, the profile's edit
// view (avatar upload, success and refusal), rewatching the onboarding video, and the help page's
// captioned video and questions.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Browser, Locator, Page } from 'playwright-core';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { MESSAGES } from '@portal/contracts';
import { newParticipant } from '../support/accounts.js';
import { CHROMIUM_MISSING_REASON, OpenPages, alertWith, chromiumMissing, logIn, startWithBrowser } from '../support/browser.js';
import { phoneJpeg } from '../support/media.js';
import { TEST_ADMIN, startTestPortal, type TestPortal } from '../support/portal.js';

const PRODUCT = 'Operation Forms';
const STREET_CORNER = 'the corner of Elm Street and Fifth Avenue';

let portal: TestPortal;
let browser: Browser;
let workDir: string;
let photoPath: string;
let textPath: string;
const pages = new OpenPages(() => ({ browser, url: portal.url }));

const openPage = () => pages.open();

/** The text of the element that describes a form field (its warning under the field). */
function descriptionOf(field: Locator): Promise<string> {
  return field.evaluate((element) =>
    (element.getAttribute('aria-describedby') ?? '')
      .split(/\s+/)
      .map((id) => (id ? (document.getElementById(id)?.textContent ?? '') : ''))
      .join(' ')
      .trim(),
  );
}

async function chooseFile(page: Page, button: Locator, path: string): Promise<void> {
  const [chooser] = await Promise.all([page.waitForEvent('filechooser'), button.click()]);
  await chooser.setFiles(path);
}

/** Plays the onboarding video past the 3-second rule, then jumps to its last moment. */
async function playToTheEnd(page: Page, welcome: Locator): Promise<void> {
  const video = welcome.getByLabel('Onboarding video');
  await welcome.getByRole('button', { name: 'Play' }).click();
  await video.evaluate((element: HTMLVideoElement) => {
    if (element.paused) void element.play();
  });
  // Real playback: on a busy 2-core machine 3 seconds of video can take much longer to play.
  await page.waitForFunction(() => (document.querySelector('video[aria-label="Onboarding video"]') as HTMLVideoElement).controls, null, {
    timeout: 30_000,
  });
  await video.evaluate((element: HTMLVideoElement) => {
    element.currentTime = element.duration - 0.3;
  });
}

describe.skipIf(chromiumMissing)(chromiumMissing ? `foundation forms (skipped: ${CHROMIUM_MISSING_REASON})` : 'foundation forms', () => {
  beforeAll(async () => {
    workDir = mkdtempSync(join(tmpdir(), 'portal-e2e-forms-'));
    photoPath = join(workDir, 'avatar.jpg');
    writeFileSync(photoPath, await phoneJpeg({ orientation: 1 }));
    textPath = join(workDir, 'notes.txt');
    writeFileSync(textPath, 'not a picture');
    ({ portal, browser } = await startWithBrowser(startTestPortal({ PRODUCT_NAME: PRODUCT, STREET_CORNER })));
  });

  afterAll(async () => {
    await browser?.close();
    await portal?.dispose();
    if (workDir) rmSync(workDir, { recursive: true, force: true });
  });

  afterEach(async () => {
    const errors = (await pages.closeAll()).filter((error) => !error.includes('Failed to load resource'));
    expect(errors).toEqual([]);
  });

  it('warns under the registration fields with the shared messages and refuses a taken username', async () => {
    const page = await openPage();
    await page.goto('/registration');
    const field = (name: string) => page.getByRole('textbox', { name, exact: true });
    await field('Full Name').waitFor();

    // Nothing filled in.
    await page.getByRole('button', { name: 'Register', exact: true }).click();
    await alertWith(page, MESSAGES.registrationInput).waitFor();
    expect(await descriptionOf(field('Username'))).toBe(MESSAGES.registrationInput);
    expect(await descriptionOf(field('Password'))).toBe(MESSAGES.registrationInput);
    expect(await descriptionOf(field('Full Name'))).toBe(MESSAGES.fullNameRequired);
    expect(await descriptionOf(field('Email'))).toBe(MESSAGES.invalidEmail);
    expect(await descriptionOf(field('Phone Number'))).toBe(MESSAGES.phoneFormat);
    expect(await field('Username').getAttribute('aria-invalid')).toBe('true');

    // Wrong formats.
    await field('Full Name').fill('Ida Informant');
    await field('Username').fill('overseer');
    await field('Email').fill('not-an-address');
    await field('Phone Number').fill('555-123-45');
    await field('Password').fill('short');
    await page.getByRole('button', { name: 'Register', exact: true }).click();
    await page.getByText(MESSAGES.passwordTooShort).waitFor();
    expect(await descriptionOf(field('Email'))).toBe(MESSAGES.invalidEmail);
    expect(await descriptionOf(field('Phone Number'))).toBe(MESSAGES.phoneFormat);
    expect(await alertWith(page, MESSAGES.registrationInput).count()).toBe(0);

    // Confirmations that differ.
    await field('Email').fill('someone-new@example.org');
    await field('Phone Number').fill('5551234567');
    await field('Confirm Phone Number').fill('5551234568');
    await field('Password').fill('password1');
    await field('Confirm Password').fill('password2');
    await page.getByRole('button', { name: 'Register', exact: true }).click();
    await page.getByText(MESSAGES.phonesDoNotMatch).waitFor();
    await page.getByText(MESSAGES.passwordsDoNotMatch).waitFor();
    // The participation terms must be accepted (their words are beside the box).
    await page.getByText(MESSAGES.termsRequired).waitFor();
    const terms = page.getByRole('checkbox', { name: /I accept the participation terms \(version \S+\)/ });
    expect(await terms.getAttribute('aria-describedby')).toBeTruthy();
    await terms.check();

    // Valid, but the username belongs to the administrator: the server's message, no photo step.
    await field('Confirm Phone Number').fill('5551234567');
    await field('Confirm Password').fill('password1');
    await page.getByRole('button', { name: 'Register', exact: true }).click();
    await page.getByText(MESSAGES.usernameTaken).waitFor();
    expect(await descriptionOf(field('Username'))).toBe(MESSAGES.usernameTaken);
    expect(await page.getByRole('dialog').count()).toBe(0);

    // A free username opens the photo step; Cancel closes it and keeps the form.
    await field('Username').fill('ida_forms');
    await page.getByRole('button', { name: 'Register', exact: true }).click();
    const photoDialog = page.getByRole('dialog', { name: 'Verification Photo' });
    await photoDialog.waitFor();
    await photoDialog.getByRole('button', { name: 'Cancel' }).click();
    await photoDialog.waitFor({ state: 'detached' });
    expect(await field('Username').inputValue()).toBe('ida_forms');
  });

  it('edits the profile with a new avatar, and shows a refused change with the server message', async () => {
    const page = await openPage();
    const participant = await newParticipant(portal.url);
    const { username } = participant.user;
    await logIn(page, username, participant.password);
    await page.waitForURL('**/home');
    await page.goto('/user');
    await page.getByRole('heading', { level: 1, name: `${username} (They/Them)` }).waitFor();
    await page.getByText('Ida Informant').waitFor();
    // No avatar yet: the profile shows the verification photo.
    const picture = page.getByRole('img', { name: `Picture of ${username}` });
    expect(await picture.getAttribute('src')).toMatch(/\/verification-photo\?v=/);

    await page.getByRole('button', { name: 'Edit Profile' }).click();
    // Not a picture: refused in the browser.
    await chooseFile(page, page.getByRole('button', { name: 'Upload Avatar' }), textPath);
    await page.getByText(MESSAGES.avatarNotImage).waitFor();
    await page.getByRole('textbox', { name: 'Full Name' }).fill('Ada Informant');
    await page.getByRole('combobox', { name: 'Pronouns' }).selectOption('');
    await chooseFile(page, page.getByRole('button', { name: 'Upload Avatar' }), photoPath);
    await page.getByRole('img', { name: 'Your new avatar' }).waitFor();
    await page.getByRole('button', { name: 'Save Changes' }).click();

    await alertWith(page, MESSAGES.userUpdated).waitFor();
    await page.getByRole('heading', { level: 1, name: username, exact: true }).waitFor();
    await page.getByText('Ada Informant').waitFor();
    await page.getByText('Prefer not to say').waitFor();
    await page.waitForFunction(
      (name) => document.querySelector(`img[alt="Picture of ${name}"]`)?.getAttribute('src')?.includes('/avatar?v='),
      username,
    );
    const avatar = await page.evaluate(async (name) => {
      const image = document.querySelector<HTMLImageElement>(`img[alt="Picture of ${name}"]`)!;
      await image.decode();
      return { width: image.naturalWidth, height: image.naturalHeight };
    }, username);
    expect(avatar.width).toBeGreaterThan(0);

    // A new address needs the current password: asked for as soon as the address is edited, checked by the server.
    await page.getByRole('button', { name: 'Edit Profile' }).click();
    const currentPassword = page.getByLabel('Current Password');
    expect(await currentPassword.count()).toBe(0);
    await page.getByRole('textbox', { name: 'Email', exact: true }).fill(TEST_ADMIN.email);
    await currentPassword.waitFor();
    await page.getByRole('button', { name: 'Save Changes' }).click();
    await page.getByText(MESSAGES.currentPasswordRequired).waitFor();
    await currentPassword.fill('not-my-password');
    await page.getByRole('button', { name: 'Save Changes' }).click();
    await page.getByText(MESSAGES.currentPasswordWrong).waitFor();
    expect(await page.evaluate(() => document.activeElement?.getAttribute('autocomplete'))).toBe('current-password');
    // The administrator's address is taken: the edit view stays, with both texts.
    await currentPassword.fill(participant.password);
    await page.getByRole('button', { name: 'Save Changes' }).click();
    const refused = alertWith(page, MESSAGES.userUpdateFailed);
    await refused.waitFor();
    expect(await refused.textContent()).toContain(MESSAGES.emailTaken);
    await page.getByRole('button', { name: 'Cancel' }).click();
    await page.getByRole('button', { name: 'Edit Profile' }).waitFor();
    await page.getByText(participant.user.email).waitFor();
  });

  it('tells a registration refused as one too many from this network to wait, in the photo step', async () => {
    const limited = await startTestPortal({ PRODUCT_NAME: PRODUCT, AUTH_RATE_LIMITS: 'true', REGISTER_RATE_LIMIT_PER_MINUTE: '1' });
    const limitedPages = new OpenPages(() => ({ browser, url: limited.url }));
    try {
      // This minute's one registration from this address (the browser's too) is used up.
      await newParticipant(limited.url);
      const page = await limitedPages.open();
      await page.goto('/registration');
      await page.getByRole('heading', { name: 'Register User' }).waitFor();
      await page.getByRole('textbox', { name: 'Full Name' }).fill('Ida Informant');
      await page.getByRole('textbox', { name: 'Username' }).fill(`crowded_${Date.now().toString(36)}`);
      await page.getByRole('combobox', { name: 'Pronouns' }).selectOption('They/Them');
      await page.getByRole('textbox', { name: 'Email', exact: true }).fill(`crowded_${Date.now().toString(36)}@example.org`);
      await page.getByRole('textbox', { name: 'Phone Number', exact: true }).fill('5551234567');
      await page.getByRole('textbox', { name: 'Confirm Phone Number' }).fill('5551234567');
      await page.getByRole('textbox', { name: 'Password', exact: true }).fill('password1');
      await page.getByRole('textbox', { name: 'Confirm Password' }).fill('password1');
      await page.getByRole('checkbox', { name: /I accept the participation terms/ }).check();
      await page.getByRole('button', { name: 'Register', exact: true }).click();
      const photoDialog = page.getByRole('dialog', { name: 'Verification Photo' });
      await chooseFile(page, photoDialog.getByRole('button', { name: 'Choose from Files' }), photoPath);
      await photoDialog.getByRole('img', { name: 'Your chosen photo' }).waitFor();
      await photoDialog.getByRole('button', { name: 'Submit Photo and Register' }).click();
      const refused = alertWith(page, MESSAGES.tooManyRegistrations);
      await refused.waitFor();
      // Only the wait is asked for: not the spec's 'the username might already be taken'.
      expect(await refused.textContent()).not.toContain(MESSAGES.registrationFailed);
      expect(page.url()).toContain('/registration');
    } finally {
      await limitedPages.closeAll();
      await limited.dispose();
    }
  });

  it('rewatches the onboarding video before acknowledging it, and plays the help video with captions', async () => {
    const page = await openPage();
    const participant = await newParticipant(portal.url, {}, undefined, { watched: false });
    await logIn(page, participant.user.username, participant.password);
    await page.waitForURL('**/user');
    const welcome = page.getByRole('dialog', { name: `Welcome to ${PRODUCT}` });
    await welcome.waitFor();

    // Captions are on by default (read from the track, shown below the picture).
    const video = welcome.getByLabel('Onboarding video');
    await page.waitForFunction(() => {
      const element = document.querySelector<HTMLVideoElement>('video[aria-label="Onboarding video"]');
      return (
        element !== null &&
        element.readyState >= 1 &&
        element.textTracks[0]?.mode === 'hidden' &&
        (element.textTracks[0]?.cues?.length ?? 0) > 0
      );
    });
    await welcome.locator('[data-captions]').waitFor();
    expect(await video.evaluate((element: HTMLVideoElement) => element.textTracks[0]?.kind)).toBe('captions');

    await playToTheEnd(page, welcome);
    const acknowledgement = page.getByRole('dialog', { name: 'Video Instruction Acknowledgement' });
    await acknowledgement.waitFor();
    await acknowledgement.getByRole('button', { name: 'Rewatch Video' }).click();
    await acknowledgement.waitFor({ state: 'detached' });
    // From the start again, with the controls already unlocked.
    const again = await video.evaluate((element: HTMLVideoElement) => ({ time: element.currentTime, controls: element.controls }));
    expect(again.time).toBeLessThan(3);
    expect(again.controls).toBe(true);
    await video.evaluate((element: HTMLVideoElement) => {
      element.currentTime = element.duration - 0.3;
      if (element.paused) void element.play();
    });
    await acknowledgement.getByRole('button', { name: 'I understand' }).click();
    await page.waitForURL('**/home-validate');
    await page.getByText(`stand at ${STREET_CORNER}`).waitFor();

    // Help: the same briefing with captions, and the questions.
    await page.goto('/help');
    await page.getByRole('heading', { level: 1, name: 'Help' }).waitFor();
    await page.waitForFunction(() => {
      const element = document.querySelector<HTMLVideoElement>('video[aria-label="Training video"]');
      return element !== null && element.controls && element.readyState >= 1 && (element.textTracks[0]?.cues?.length ?? 0) > 0;
    });
    await page.locator('[data-captions]').waitFor();
    for (const question of [
      'When is my appointment?',
      'Where do I meet?',
      'What if the weather is bad?',
      'What if my call drops?',
      'Is there any payment?',
      'How do I upload evidence?',
    ]) {
      await page.getByRole('button', { name: question }).waitFor();
    }
    await page.getByRole('button', { name: 'Where do I meet?' }).click();
    await page.getByText(`Stand at ${STREET_CORNER}`).waitFor();
  }, 60_000);
});
