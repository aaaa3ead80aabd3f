// axe-core (WCAG 2 A and AA rules) over the app's pages in a phone-sized Chromium, as a visitor,
// a participant (their evidence as cards and as a table, the upload screens, the profile) and an
// administrator; the screens of a phone without a connection (a visitor's offline home, the
// details page offline, the outbox's waiting list, the warning at logout with captures still
// waiting); and a visitor's pages log no error at all (the session probe answers 200).
import type { Browser } from 'playwright-core';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { adminClient, newParticipant } from '../support/accounts.js';
import { CHROMIUM_MISSING_REASON, OpenPages, alertWith, chromiumMissing, logIn, startWithBrowser } from '../support/browser.js';
import { phoneJpeg } from '../support/media.js';
import { installedApp, workerInControl } from '../support/phone.js';
import { TEST_ADMIN, startTestPortal, type TestPortal } from '../support/portal.js';
import { violations } from '../support/axe.js';

let portal: TestPortal;
let browser: Browser;
const pages = new OpenPages(() => ({ browser, url: portal.url }));

describe.skipIf(chromiumMissing)('accessibility on a phone', () => {
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
    await pages.closeAll();
  });

  it("finds no WCAG violations on a visitor's pages, and a visitor's pages log no errors", async () => {
    const { client } = await adminClient(portal.url);
    const note = await client.post('/api/evidence', { title: 'A public note for the archive', notes: 'Seen at the corner.' });
    expect((await client.put(`/api/evidence/clearance/${(note.data as { id: string }).id}`)).status).toBe(200);
    // As a visitor's phone really is: with the app's service worker (its registration logs nothing).
    const page = await pages.open('phone', undefined, { serviceWorkers: 'allow' });
    const errors: string[] = [];
    page.on('console', (message) => {
      if (message.type() === 'error' || message.type() === 'warning') errors.push(`${page.url()}: ${message.text()}`);
    });
    const found: string[] = [];
    for (const [path, ready] of [
      ['/home', 'Login'],
      ['/archive', 'A public note for the archive'],
      ['/login', 'Reset Password'],
      ['/help', 'Help'],
      ['/reset-password-email', 'Reset Password'],
    ] as const) {
      await page.goto(path);
      await page.getByText(ready).first().waitFor();
      found.push(...(await violations(page)));
    }
    await page.goto('/archive');
    await page.getByRole('button', { name: /A public note for the archive/ }).click();
    await page.getByRole('dialog').waitFor();
    found.push(...(await violations(page)));
    expect(found).toEqual([]);
    expect(errors).toEqual([]);
  });

  it("finds no WCAG violations on a participant's pages and on the administration page", async () => {
    const participant = await newParticipant(portal.url, { password: 'password1' });
    const form = new FormData();
    form.append('title', 'A photo with a long title that needs room on a phone');
    form.append('file', new Blob([new Uint8Array(await phoneJpeg())], { type: 'image/jpeg' }), 'photo.jpg');
    expect((await participant.client.postForm('/api/evidence', form)).status).toBe(201);
    expect((await participant.client.post('/api/evidence', { title: 'A note', notes: 'n' })).status).toBe(201);
    const page = await pages.open('phone');
    await logIn(page, participant.user.username, 'password1');
    await page.waitForURL('**/home');
    const found: string[] = [];
    await page.goto('/evidence');
    await page.getByRole('list', { name: 'Your evidence' }).waitFor();
    found.push(...(await violations(page)));
    await page.getByRole('tab', { name: 'Table' }).click();
    await page.getByRole('table', { name: 'Your evidence' }).waitFor();
    found.push(...(await violations(page)));
    await page.getByRole('tab', { name: 'Evidence' }).click();
    await page.getByRole('button', { name: /A note/ }).click();
    await page.getByRole('dialog').waitFor();
    found.push(...(await violations(page)));
    for (const [path, ready] of [
      ['/user', participant.user.username],
      ['/evidenceupload', 'Back'],
      ['/home', 'Evidence'],
    ] as const) {
      await page.goto(path);
      await page.getByText(ready).first().waitFor();
      found.push(...(await violations(page)));
    }
    const admin = await pages.open('phone');
    await logIn(admin, TEST_ADMIN.username, TEST_ADMIN.password);
    await admin.waitForURL('**/home');
    await admin.goto('/admin');
    await admin.getByRole('heading', { name: 'Administration' }).first().waitFor();
    found.push(...(await violations(admin)));
    // The list of users, with its Info and Delete buttons.
    await admin.getByRole('button', { name: 'Show Users' }).click();
    await admin.getByRole('button', { name: `Info about ${participant.user.username}` }).waitFor();
    found.push(...(await violations(admin)));
    expect(found).toEqual([]);
  });

  it('finds no WCAG violations on the screens of a phone without a connection', async () => {
    const found: string[] = [];
    // A visitor opens the installed app offline: the app's frame and "You are offline".
    const visitor = await pages.open('phone', undefined, { serviceWorkers: 'allow' });
    await visitor.goto('/home');
    await visitor.getByRole('link', { name: 'Login' }).first().waitFor();
    await workerInControl(visitor);
    await visitor.context().setOffline(true);
    await visitor.reload();
    await visitor.getByRole('heading', { level: 1, name: 'You are offline' }).waitFor();
    found.push(...(await violations(visitor)));

    // A participant offline: the details page says so before Upload, the capture waits in the
    // outbox's list, and logging out asks first.
    const { page, context } = await installedApp(pages);
    await context.setOffline(true);
    await page.getByRole('button', { name: 'Add evidence' }).click();
    await page.getByRole('menuitem', { name: 'Notes' }).click();
    await page.waitForURL('**/evidence-details');
    await page.getByText('You are offline. Upload Evidence saves it on this phone', { exact: false }).waitFor();
    await page.getByRole('textbox', { name: 'Title' }).fill('A note kept on the phone');
    found.push(...(await violations(page)));
    await page.getByRole('button', { name: 'Upload Evidence' }).click();
    await page.waitForURL('**/evidence');
    const waiting = page.getByRole('list', { name: 'Evidence waiting to upload' }).getByRole('listitem').filter({ hasText: 'A note kept' });
    await waiting.getByText('Waiting for network').waitFor();
    // With the toast that says so (a filled alert: white text on the theme's colour).
    await alertWith(page, 'Saved on this phone').waitFor();
    found.push(...(await violations(page)));
    await page.getByRole('button', { name: 'Menu' }).click();
    await page.getByRole('menuitem', { name: 'Logout' }).click();
    const warning = page.getByRole('dialog', { name: 'Evidence still waiting' });
    await warning.getByRole('button', { name: 'Log Out' }).waitFor();
    found.push(...(await violations(page)));
    expect(found).toEqual([]);
    // Two phones, a service worker installed, and axe run five times: room for a busy machine.
  }, 90_000);
});
