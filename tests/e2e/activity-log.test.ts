// The Activity view of the Administration page in Chromium, against a whole portal: a moderator's
// acts (a publication, an edit) appear newest first with what changed, the filters narrow the
// list, the CSV download holds the same entries, and the view (and the Activity button beside the
// review queue's views) works on a 360 px phone. Also the
// participation terms a participant accepted, in their information dialog.
import type { Browser, Page } from 'playwright-core';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { ApiClient } from '../support/api-client.js';
import { adminClient, newParticipant } from '../support/accounts.js';
import { CHROMIUM_MISSING_REASON, OpenPages, chromiumMissing, fitsWidth, launchBrowser } from '../support/browser.js';
import { waitFor } from '@portal/platform/testing';
import { TEST_ADMIN, startTestPortal, type TestPortal } from '../support/portal.js';

let portal: TestPortal;
let browser: Browser;
let admin: ApiClient;
let itemId: string;
let informantName: string;
const pages = new OpenPages(() => ({ browser, url: portal.url }));

beforeAll(async () => {
  const [started, launched] = await Promise.all([
    startTestPortal(),
    chromiumMissing ? Promise.resolve(undefined as unknown as Browser) : launchBrowser(),
  ]);
  portal = started;
  browser = launched;
  admin = (await adminClient(portal.url)).client;
  const informant = await newParticipant(portal.url, { terms_version: '1' });
  informantName = informant.user.username;
  const item = await informant.client.post('/api/evidence', { title: 'Lamp post signal', notes: 'Three flashes.' });
  itemId = item.data.id;
  expect((await admin.put(`/api/evidence/clearance/${itemId}`)).status).toBe(200);
  expect((await admin.put(`/api/evidence/update/${itemId}`, { title: 'Lamp post signals', notes: 'Three flashes.' })).status).toBe(200);
  await waitFor(async () => (await admin.get(`/api/admin/activity?target=${itemId}`)).data.length === 2, { what: 'two audit entries' });
}, 120_000);

afterAll(async () => {
  await browser?.close();
  await portal?.dispose();
});

afterEach(async () => {
  const errors = await pages.closeAll();
  expect(errors.filter((error) => !/Failed to load resource/.test(error))).toEqual([]);
});

async function openActivity(page: Page) {
  await page.goto('/admin');
  await page.getByRole('heading', { level: 1, name: 'Administration' }).waitFor();
  await page.getByRole('button', { name: 'Activity' }).click();
  const dialog = page.getByRole('dialog', { name: 'Activity' });
  await dialog.getByRole('list', { name: 'Activity' }).waitFor();
  return dialog;
}

describe.skipIf(chromiumMissing)('the Activity view', () => {
  it('lists what moderators did, newest first, narrows by filters and downloads the same as CSV', async () => {
    const page = await pages.open('desktop', admin.cookies.get('portal_session'));
    const dialog = await openActivity(page);
    const entries = dialog.getByRole('listitem');
    await expect.poll(() => entries.first().textContent()).toContain('Edited an item: Lamp post signals');
    await expect.poll(() => dialog.textContent()).toContain('title: Lamp post signal → Lamp post signals');
    expect(await dialog.textContent()).toContain('Made an item public: Lamp post signal');
    expect(await dialog.textContent()).toContain(`by ${TEST_ADMIN.username}`);

    // Keyboard only: the action filter, then Apply.
    await dialog.getByRole('combobox', { name: 'Action' }).focus();
    await page.keyboard.press('Enter');
    await page.getByRole('option', { name: 'Made an item public' }).click();
    await dialog.getByRole('button', { name: 'Apply' }).click();
    await expect.poll(() => entries.count()).toBe(1);
    expect(await entries.first().textContent()).toContain('Made an item public: Lamp post signal');

    await dialog.getByLabel('Item or user id').fill('00000000-0000-4000-8000-000000000000');
    await dialog.getByRole('button', { name: 'Apply' }).click();
    await dialog.getByText('Nothing recorded matches these filters.').waitFor();
    await dialog.getByRole('button', { name: 'Clear' }).click();
    await expect.poll(() => entries.count()).toBeGreaterThanOrEqual(3);

    const [download] = await Promise.all([page.waitForEvent('download'), dialog.getByRole('link', { name: 'Download CSV' }).click()]);
    expect(download.suggestedFilename()).toMatch(/^activity-\d{4}-\d{2}-\d{2}\.csv$/);
    const csv = await new Promise<string>((resolve, reject) => {
      download.createReadStream().then((stream) => {
        const chunks: Buffer[] = [];
        stream.on('data', (chunk: Buffer) => chunks.push(chunk));
        stream.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
        stream.on('error', reject);
      }, reject);
    });
    expect(csv.split('\r\n')[0]).toMatch(/^"at","actor_username",/);
    expect(csv).toContain('evidence.edit');
    expect(csv).toContain('Lamp post signals');

    await dialog.getByRole('button', { name: 'Close' }).click();
    await dialog.waitFor({ state: 'hidden' });
  });

  it("shows in a user's information which participation terms they accepted, and when", async () => {
    const page = await pages.open('desktop', admin.cookies.get('portal_session'));
    await page.goto('/admin');
    await page.getByRole('button', { name: 'Show Users' }).click();
    await page.getByRole('button', { name: `Info about ${informantName}` }).click();
    const info = page.getByRole('dialog', { name: 'User Information' });
    await expect.poll(() => info.locator('dl').innerText()).toMatch(/Participation Terms\s+version 1, accepted \S+/);
  });

  it('fits a 360 px phone', async () => {
    const page = await pages.open('phone', admin.cookies.get('portal_session'));
    await page.setViewportSize({ width: 360, height: 740 });
    const dialog = await openActivity(page);
    await expect.poll(() => dialog.textContent()).toContain('Edited an item');
    await fitsWidth(page);
    await dialog.getByRole('button', { name: 'Close' }).waitFor();
  });

  it('sits with the review queue on a 360 px phone: Activity beside Show Users, the queue views two by two, whole', async () => {
    const page = await pages.open('phone', admin.cookies.get('portal_session'));
    await page.setViewportSize({ width: 360, height: 740 });
    await page.goto('/admin');
    const views = page.getByRole('group', { name: 'Show' }).getByRole('button');
    await expect
      .poll(() => views.allTextContents(), { timeout: 10_000 })
      .toEqual([
        expect.stringMatching(/^New \(\d+\)$/),
        expect.stringMatching(/^Public/),
        expect.stringMatching(/^Private/),
        expect.stringMatching(/^All/),
      ]);
    const box = async (name: string | RegExp) => (await page.getByRole('button', { name, exact: typeof name === 'string' }).boundingBox())!;
    const [users, activity] = [await box('Show Users'), await box('Activity')];
    expect(activity.y).toBe(users.y);
    expect(activity.x).toBeGreaterThan(users.x + users.width);
    expect(activity.height).toBeGreaterThanOrEqual(44);
    const cells = await Promise.all([0, 1, 2, 3].map(async (i) => (await views.nth(i).boundingBox())!));
    expect(cells[1]!.y).toBe(cells[0]!.y);
    expect(cells[2]!.y).toBeGreaterThan(cells[0]!.y);
    expect(cells[3]!.y).toBe(cells[2]!.y);
    for (const cell of cells) expect(cell.x + cell.width).toBeLessThanOrEqual(360);
    await fitsWidth(page);
  });
});

if (chromiumMissing) describe.skip(`the Activity view — ${CHROMIUM_MISSING_REASON}`, () => it('skipped', () => undefined));
