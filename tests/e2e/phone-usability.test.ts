// What a new participant meets on a phone (Chromium, 390 px wide): the onboarding gate on every
// participant page with a way out of the video dialog, the login limit's message, Discard asking
// first, toasts below the navigation bar, a Table tab that leaves titles room, and photos in
// item dialogs without cropped corners; cards that read alike told apart, toasts clear of the page
// title and the add button, the app's short name in whole words.
import { describe, expect, it } from 'vitest';
import { MESSAGES } from '@portal/contracts';
import { ApiClient } from '../support/api-client.js';
import { newParticipant } from '../support/accounts.js';
import { CHROMIUM_MISSING_REASON, alertWith, chromiumMissing, logIn } from '../support/browser.js';
import { phoneJpeg } from '../support/media.js';
import { PhoneSuite } from '../support/phone.js';

const phone = new PhoneSuite();
const { pages } = phone;

const signedIn = (watched = true) => pages.signedInPage({ watched });

describe.skipIf(chromiumMissing)('a participant on a phone', () => {
  if (chromiumMissing) console.warn(CHROMIUM_MISSING_REASON);

  // The sign-in limits on, as in production (ten failed logins per account).
  phone.start({ env: { AUTH_RATE_LIMITS: 'true' } });

  it('meets the onboarding video on every participant page, and can leave it for Help or Log Out', async () => {
    const { page } = await signedIn(false);
    for (const path of ['/evidence', '/evidenceupload', '/evidence-details', '/home']) {
      await page.goto(path);
      await page.waitForURL('**/user');
      await page.getByRole('dialog', { name: /Welcome to/ }).waitFor();
    }
    const dialog = page.getByRole('dialog', { name: /Welcome to/ });
    await dialog.getByRole('link', { name: 'Help' }).click();
    await page.waitForURL('**/help');
    await page.goto('/user');
    await dialog.getByRole('button', { name: 'Log Out' }).click();
    await page.waitForURL('**/home');
    await page
      .getByRole('link', { name: 'Login' })
      .or(page.getByRole('button', { name: 'Login' }))
      .first()
      .waitFor();
    expect(await page.evaluate(async () => (await (await fetch('/api/session')).json()) as unknown)).toEqual({ user: null });
  });

  it('says when to try again after too many failed logins', async () => {
    const { participant } = await signedIn();
    const stranger = new ApiClient(phone.portal.url);
    for (let attempt = 0; attempt < 10; attempt++) {
      expect((await stranger.post('/api/user/login', { username: participant.user.username, password: 'wrong-password' })).status).toBe(
        401,
      );
    }
    const page = await pages.open('phone');
    await page.goto('/login');
    await page.getByRole('textbox', { name: 'Username or Email' }).fill(participant.user.username);
    await page.getByRole('textbox', { name: 'Password' }).fill('wrong-password');
    await page.getByRole('button', { name: 'Login', exact: true }).click();
    await alertWith(page, 'Too many attempts. Please try again in 15 minutes.').waitFor();
    expect(await page.getByText(MESSAGES.loginNoServer).count()).toBe(0);
  });

  it('asks before discarding a recording, and keeps recording when told to', async () => {
    const { page } = await signedIn();
    await page.goto('/evidence');
    await page.getByRole('button', { name: 'Add evidence' }).click();
    await page.getByRole('menuitem', { name: 'Audio' }).click();
    await page.getByRole('button', { name: 'Start Recording' }).click();
    await page.getByText('Recording…').waitFor();
    await page.getByRole('button', { name: 'Discard' }).click();
    const confirm = page.getByRole('dialog', { name: 'Discard Recording?' });
    await confirm.waitFor();
    // Paused while asking.
    await page.getByText('Paused', { exact: true }).waitFor();
    await confirm.getByRole('button', { name: 'Cancel' }).click();
    await page.getByText('Recording…').waitFor();
    await page.getByRole('button', { name: 'Save Recording' }).waitFor();
    await page.getByRole('button', { name: 'Discard' }).click();
    await confirm.getByRole('button', { name: 'Discard' }).click();
    await page.getByRole('button', { name: 'Start Recording' }).waitFor();
  });

  it('shows toasts below the navigation bar, a Table tab with room for titles and photos with small corners', async () => {
    const { page, participant } = await signedIn();
    const form = new FormData();
    form.append('title', 'Crowd at the north gate of the festival');
    form.append('file', new Blob([new Uint8Array(await phoneJpeg())], { type: 'image/jpeg' }), 'photo.jpg');
    const created = await participant.client.postForm('/api/evidence', form);
    expect(created.status).toBe(201);
    await page.goto('/evidence');
    await page.locator('li[data-media-status="ready"]').waitFor({ timeout: 30_000 });

    await page.getByRole('tab', { name: 'Table' }).click();
    const title = page
      .getByRole('table', { name: 'Your evidence' })
      .getByRole('button', { name: 'Crowd at the north gate of the festival' });
    await title.waitFor();
    expect((await title.boundingBox())!.width).toBeGreaterThanOrEqual(140);

    await page.getByRole('tab', { name: 'Evidence' }).click();
    await page.getByRole('button', { name: /Photo: Crowd at the north gate/ }).click();
    const photo = page.getByRole('dialog').getByRole('img', { name: 'Crowd at the north gate of the festival' });
    await photo.waitFor();
    expect(await photo.evaluate((element) => getComputedStyle(element).borderTopLeftRadius)).toBe('8px');
    await page.keyboard.press('Escape');

    // A toast (deleting the item) leaves the navigation bar uncovered.
    await page.getByRole('button', { name: /Photo: Crowd at the north gate/ }).click();
    await page.getByRole('dialog').getByRole('button', { name: 'Delete' }).click();
    await page.getByRole('dialog', { name: 'Confirm Delete' }).getByRole('button', { name: 'Confirm' }).click();
    const toast = alertWith(page, MESSAGES.evidenceDeleted);
    await toast.waitFor();
    const bar = (await page.locator('header').first().boundingBox())!;
    const shown = (await toast.boundingBox())!;
    expect(shown.y).toBeGreaterThanOrEqual(bar.y + bar.height);
    await page.getByRole('button', { name: 'Menu' }).click();
    await page.getByRole('menu').waitFor();
  });

  it('tells apart cards whose titles begin alike, keeps the last card and the page title uncovered, and names the app in whole words', async () => {
    const { page, participant } = await signedIn();
    const titles = [
      'Offline note at the gate',
      'Offline photo of the gate',
      'Offline sound of the gate',
      'Offline note at the bridge',
      'Harbour at night',
    ];
    for (const title of titles) expect((await participant.client.post('/api/evidence', { title, notes: 'seen' })).status).toBe(201);
    await page.goto('/evidence');
    const cards = page.getByRole('list', { name: 'Your evidence' }).locator('li[data-evidence-id]');
    await expect.poll(() => cards.count()).toBe(titles.length);
    // What the eye reads on each card (the accessible name carries the whole title anyway).
    const read = await cards.evaluateAll((items) =>
      items.map((item) => {
        const line = item.querySelector('p')!.cloneNode(true) as HTMLElement;
        for (const hidden of line.querySelectorAll('span[style*="absolute"]')) hidden.remove();
        return (line.textContent ?? '').trim();
      }),
    );
    expect(new Set(read).size).toBe(titles.length);
    expect(read).toContain('Harbour  ...');
    expect(read.filter((text) => text === 'Offline ...')).toEqual([]);

    // Scrolled to the end, the red add button leaves the last card free.
    await page.evaluate(() => window.scrollTo(0, document.documentElement.scrollHeight));
    const fab = (await page.getByRole('button', { name: 'Add evidence' }).boundingBox())!;
    await expect
      .poll(async () => {
        const last = (await cards.last().boundingBox())!;
        return last.y + last.height <= fab.y || last.x + last.width <= fab.x;
      })
      .toBe(true);

    // A toast leaves the page title and the add button uncovered.
    await page.evaluate(() => window.scrollTo(0, 0));
    await page.getByRole('button', { name: /Note: Harbour at night/ }).click();
    await page.getByRole('dialog').getByRole('button', { name: 'Delete' }).click();
    await page.getByRole('dialog', { name: 'Confirm Delete' }).getByRole('button', { name: 'Confirm' }).click();
    const toast = alertWith(page, MESSAGES.evidenceDeleted);
    await toast.waitFor();
    const shown = (await toast.boundingBox())!;
    const title = (await page.getByRole('heading', { level: 1, name: 'Evidence' }).boundingBox())!;
    const button = (await page.getByRole('button', { name: 'Add evidence' }).boundingBox())!;
    const overlaps = (a: typeof shown, b: typeof shown) =>
      a.x < b.x + b.width && b.x < a.x + a.width && a.y < b.y + b.height && b.y < a.y + a.height;
    expect(overlaps(shown, title)).toBe(false);
    expect(overlaps(shown, button)).toBe(false);
    // Moving on to another page, the toast goes (it would cover that page's buttons).
    await page.getByRole('button', { name: 'Menu' }).click();
    await page.getByRole('menuitem', { name: 'Archive' }).click();
    await page.waitForURL('**/archive');
    await toast.waitFor({ state: 'detached', timeout: 3000 });

    // The name under the app's icon on a home screen: whole words of the product's name.
    const manifest = await page.evaluate(
      async () => (await (await fetch('/manifest.webmanifest')).json()) as { name: string; short_name: string },
    );
    expect(manifest).toMatchObject({ name: 'Operation Test', short_name: 'Operation' });
  });

  it('takes the names people have (any script, NFC), and refuses a name that only looks like a taken one', async () => {
    const tag = Date.now().toString(36).replace(/[0-9]/g, 'k');
    const zoe = await newParticipant(phone.portal.url, { username: `Zoë_${tag}`, email: `zoe_${tag}@example.org` });
    expect(zoe.user.username).toBe(`Zoë_${tag}`);
    // Typed decomposed (e + combining diaeresis) and in capitals, on a phone: the same account.
    const page = await pages.open('phone');
    await logIn(page, `ZOE\u0308_${tag.toUpperCase()}`, zoe.password);
    await page.getByRole('heading', { level: 1, name: `Welcome, Zoë_${tag}` }).waitFor();

    // The registration form's check and the server both refuse a look-alike: fullwidth letters
    // are the same name once folded (NFKC); a Cyrillic о among Latin letters mixes alphabets.
    const stranger = new ApiClient(phone.portal.url);
    const check = await stranger.post('/api/user/check', { username: `Ｚｏë_${tag}` });
    expect(check.data).toMatchObject({ exists: true, message: MESSAGES.usernameTaken, field: 'username' });
    await expect(newParticipant(phone.portal.url, { username: `Ｚｏë_${tag}`, email: `zoe2_${tag}@example.org` })).rejects.toThrow(
      MESSAGES.usernameTaken,
    );
    const mixed = await stranger.post('/api/user/check', { username: `Z\u043eë_${tag}` });
    expect(mixed.data).toMatchObject({ exists: true, message: expect.stringMatching(/one alphabet/), field: 'username' });
    await expect(newParticipant(phone.portal.url, { username: `Z\u043eë_${tag}`, email: `zoe4_${tag}@example.org` })).rejects.toThrow(
      /one alphabet/,
    );
    // Anything but letters, digits, dots, dashes and underscores is still SPEC's refusal.
    await expect(newParticipant(phone.portal.url, { username: `zoë <${tag}>`, email: `zoe3_${tag}@example.org` })).rejects.toThrow(
      MESSAGES.usernameFormat,
    );
  });

  it("shows the videos' captions below the picture, not over the slide, and hands Play/Pause to the player's own controls past 3 s (touch and keyboard)", async () => {
    const { page } = await signedIn(false);
    await page.goto('/user');
    const welcome = page.getByRole('dialog', { name: /Welcome to/ });
    const video = welcome.getByLabel('Onboarding video');
    const captions = welcome.locator('[data-captions]');
    // Before 3 s, by keyboard: the Play/Pause button, focused and pressed.
    const play = welcome.getByRole('button', { name: 'Play' });
    await play.focus();
    await page.keyboard.press('Enter');
    await welcome.getByRole('button', { name: 'Pause' }).waitFor();
    await captions.getByText('Welcome, informant.', { exact: false }).waitFor();
    const picture = (await video.boundingBox())!;
    const shown = (await captions.boundingBox())!;
    expect(shown.y).toBeGreaterThanOrEqual(picture.y + picture.height);
    // The browser does not draw them over the picture as well.
    expect(await video.evaluate((element: HTMLVideoElement) => element.textTracks[0]?.mode)).toBe('hidden');

    // Past 3 s: the player's own controls appear and the custom button goes (SPEC); the keyboard
    // user who was on the button is now on the player, and Space pauses and plays it.
    await page.waitForFunction(() => (document.querySelector('video[aria-label="Onboarding video"]') as HTMLVideoElement).controls, null, {
      timeout: 10_000,
    });
    await expect.poll(() => welcome.getByRole('button', { name: /^(Play|Pause)$/ }).count()).toBe(0);
    expect(await video.evaluate((element) => element === document.activeElement)).toBe(true);
    await page.keyboard.press('Space');
    await expect.poll(() => video.evaluate((element: HTMLVideoElement) => element.paused)).toBe(true);
    await page.keyboard.press('Space');
    await expect.poll(() => video.evaluate((element: HTMLVideoElement) => element.paused)).toBe(false);
    // By touch: a tap on the picture shows the player's controls; the dialog's own buttons stay in view.
    await video.tap();
    const help = (await welcome.getByRole('button', { name: 'Log Out' }).boundingBox())!;
    expect(help.y + help.height).toBeLessThanOrEqual(844);

    // Help: the training video's captions below it too.
    await page.goto('/help');
    const training = page.getByLabel('Training video');
    await training.evaluate(async (element: HTMLVideoElement) => {
      element.muted = true;
      element.currentTime = 6;
      await element.play();
    });
    const helpCaptions = page.locator('[data-captions]');
    await helpCaptions.getByText('stand at the street corner', { exact: false }).waitFor();
    const helpPicture = (await training.boundingBox())!;
    expect((await helpCaptions.boundingBox())!.y).toBeGreaterThanOrEqual(helpPicture.y + helpPicture.height);
  });
});
