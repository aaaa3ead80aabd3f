// Moderation in Chromium, against a whole portal: a moderator opens the administration page on the
// review queue (with its counts), publishes exactly the items chosen (a Shift range, one taken
// out again), marks the rest reviewed and searches; a visitor searches the archive; the owner is
// told before saving that an edit takes a published item out of the archive.
import type { Browser, Page } from 'playwright-core';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { ApiClient } from '../support/api-client.js';
import { adminClient, newParticipant } from '../support/accounts.js';
import { CHROMIUM_MISSING_REASON, OpenPages, chromiumMissing, launchBrowser } from '../support/browser.js';
import type { EvidenceItem } from '../support/evidence.js';
import { readZip } from '../support/participant-data.js';
import { startTestPortal, type TestPortal } from '../support/portal.js';

let portal: TestPortal;
let browser: Browser;
let admin: ApiClient;
let informant: { client: ApiClient; user: { id: string; username: string } };
const made: Record<string, EvidenceItem> = {};
const pages = new OpenPages(() => ({ browser, url: portal.url }));

beforeAll(async () => {
  const [started, launched] = await Promise.all([
    startTestPortal(),
    chromiumMissing ? Promise.resolve(undefined as unknown as Browser) : launchBrowser(),
  ]);
  portal = started;
  browser = launched;
  admin = (await adminClient(portal.url)).client;
  informant = await newParticipant(portal.url);
  // Oldest first; the lists show newest first: Bridge graffiti, Drum circle, Lantern parade, Old news.
  for (const [title, notes] of [
    ['Old news', 'Published before the festival.'],
    ['Lantern parade', 'Paper lanterns along the river.'],
    ['Drum circle', 'Loud drumming after midnight.'],
    ['Bridge graffiti', 'A stencil on the north pillar.'],
  ] as const) {
    const created = await informant.client.post('/api/evidence', { title, notes, location: '40.71283, -74.00609 (±15 m)' });
    expect(created.status).toBe(201);
    made[title] = created.data as EvidenceItem;
  }
  expect((await admin.put('/api/evidence/visibility', { ids: [made['Old news']!.id], is_public: true })).status).toBe(200);
}, 120_000);

afterAll(async () => {
  await browser?.close();
  await portal?.dispose();
});

afterEach(async () => {
  const errors = await pages.closeAll();
  expect(errors.filter((error) => !/Failed to load resource/.test(error))).toEqual([]);
});

const stored = async (title: string) =>
  (await admin.get(`/api/evidence/item/${made[title]!.id}`)).data as EvidenceItem & { review_status: string };

function rowTitles(page: Page, list: string): Promise<string[]> {
  return page
    .getByRole('list', { name: list })
    .locator('li[data-evidence-id]')
    .evaluateAll((items) => items.map((item) => item.querySelector('p, span.MuiTypography-root')?.textContent ?? ''));
}

describe.skipIf(chromiumMissing)('moderation (Chromium)', () => {
  if (chromiumMissing) console.warn(CHROMIUM_MISSING_REASON);

  it('a moderator works through the review queue: a selected publish, mark reviewed, and a search', async () => {
    const page = await pages.open('desktop', admin.cookies.get('portal_session'));
    await page.goto('/admin');
    await page.getByRole('heading', { level: 2, name: 'Evidence', exact: true }).waitFor();
    // The riskiest button is not the loudest; the view toggle is not red.
    expect(await page.getByRole('button', { name: 'Make All Public' }).getAttribute('class')).toMatch(/MuiButton-outlined/);
    expect(await page.getByRole('button', { name: 'Make All Public' }).getAttribute('class')).not.toMatch(/MuiButton-contained/);
    expect(await page.getByRole('button', { name: 'Show Users' }).getAttribute('class')).not.toMatch(/colorSecondary|colorError/);

    // It opens on the queue, with the counts.
    const show = page.getByRole('group', { name: 'Show' });
    await show.getByRole('button', { name: 'New (3)' }).waitFor();
    expect(await show.getByRole('button', { name: 'New (3)' }).getAttribute('aria-pressed')).toBe('true');
    await show.getByRole('button', { name: 'Public (1)' }).waitFor();
    await show.getByRole('button', { name: 'Private (3)' }).waitFor();
    const queue = page.getByRole('list', { name: 'Review queue' });
    await queue.getByText('Bridge graffiti').waitFor();
    expect(await rowTitles(page, 'Review queue')).toEqual(['Bridge graffiti', 'Drum circle', 'Lantern parade']);

    // A range with Shift, then one taken out again: exactly two chosen.
    await queue.getByRole('checkbox', { name: 'Select Bridge graffiti' }).click();
    await queue.getByRole('checkbox', { name: 'Select Lantern parade' }).click({ modifiers: ['Shift'] });
    await page.getByText('Selected: 3 items').waitFor();
    await queue.getByRole('checkbox', { name: 'Select Drum circle' }).click();
    await page.getByText('Selected: 2 items').waitFor();
    await page.getByRole('button', { name: 'Publish selected' }).click();
    const confirm = page.getByRole('dialog', { name: 'Publish Selected Evidence' });
    await confirm.getByText('Make 2 items public? Each will be shown in the public archive once its media is ready.').waitFor();
    await confirm.getByRole('button', { name: 'Confirm' }).click();
    await page.getByRole('alert').filter({ hasText: '2 items made public.' }).waitFor();
    await show.getByRole('button', { name: 'New (1)' }).waitFor();
    await show.getByRole('button', { name: 'Public (3)' }).waitFor();
    await expect.poll(() => rowTitles(page, 'Review queue')).toEqual(['Drum circle']);
    expect(await stored('Bridge graffiti')).toMatchObject({ is_public: true, review_status: 'reviewed' });
    expect(await stored('Lantern parade')).toMatchObject({ is_public: true, review_status: 'reviewed' });
    expect(await stored('Drum circle')).toMatchObject({ is_public: false, review_status: 'new' });

    // The rest is looked at and kept private.
    await page.getByRole('checkbox', { name: 'Select all shown' }).check();
    await page.getByRole('button', { name: 'Mark reviewed' }).click();
    await page.getByRole('alert').filter({ hasText: '1 item marked reviewed.' }).waitFor();
    await page.getByText('Nothing new to review.').waitFor();
    await show.getByRole('button', { name: 'New (0)' }).waitFor();
    expect(await stored('Drum circle')).toMatchObject({ is_public: false, review_status: 'reviewed' });

    // A search over everything, with the media filter beside it.
    await show.getByRole('button', { name: 'All (4)' }).click();
    await page.getByRole('searchbox', { name: 'Search evidence' }).fill('LANTERNS');
    await expect.poll(() => rowTitles(page, 'All evidence')).toEqual(['Lantern parade']);
    await page.getByRole('searchbox', { name: 'Search evidence' }).fill('midnight');
    await expect.poll(() => rowTitles(page, 'All evidence')).toEqual(['Drum circle']);
    await page.getByRole('button', { name: 'Photos', exact: true }).click();
    await page.getByText('No evidence matches these filters.').waitFor();
    // Administrators see the position as recorded.
    await page.getByRole('button', { name: 'All', exact: true }).click();
    await page
      .getByRole('list', { name: 'All evidence' })
      .getByRole('button', { name: /Drum circle/ })
      .click();
    await page.getByRole('dialog', { name: 'Drum circle' }).getByText('Location: 40.71283, -74.00609 (±15 m)').waitFor();
  });

  it('a visitor searches the archive and sees positions only roughly', async () => {
    const page = await pages.open('phone');
    await page.goto('/archive');
    const cards = page.getByRole('list', { name: 'Public evidence' });
    await cards.getByRole('button', { name: 'Note: Old news' }).waitFor();
    await page.getByRole('searchbox', { name: 'Search the archive' }).fill('lantern');
    await expect.poll(() => cards.getByRole('listitem').count()).toBe(1);
    await cards.getByRole('button', { name: 'Note: Lantern parade' }).click();
    await page.getByRole('dialog', { name: 'Lantern parade' }).getByText('Location: 40.713, -74.006 (±111 m)').waitFor();
    await page.getByRole('dialog', { name: 'Lantern parade' }).getByRole('button', { name: 'Close' }).click();
    // Private items are not found.
    await page.getByRole('searchbox', { name: 'Search the archive' }).fill('drumming');
    await page.getByText('Nothing in the archive matches “drumming”.').waitFor();
  });

  it('the owner is told before saving that an edit takes a published item out of the archive', async () => {
    const page = await pages.open('phone', informant.client.cookies.get('portal_session'));
    await page.goto('/evidence');
    const card = page.locator('li[data-evidence-id]').filter({ has: page.getByRole('button', { name: /: Bridge graffiti/ }) });
    await card.getByRole('button').click();
    await page.getByRole('dialog', { name: 'Bridge graffiti' }).getByRole('button', { name: 'Edit' }).click();
    const edit = page.getByRole('dialog', { name: 'Edit Evidence' });
    await edit.getByText('This evidence is in the public archive. When you save changes, it leaves the archive').waitFor();
    await edit.getByRole('textbox', { name: 'Notes' }).fill('A stencil on the south pillar.');
    await edit.getByRole('button', { name: 'Save' }).click();
    await page.getByRole('dialog', { name: 'Bridge graffiti' }).waitFor();
    await expect.poll(async () => (await stored('Bridge graffiti')).is_public).toBe(false);
    expect((await stored('Bridge graffiti')).review_status).toBe('new');

    // Beside "Add my location", how much of the position the public will see.
    await page.getByRole('dialog', { name: 'Bridge graffiti' }).getByRole('button', { name: 'Close' }).click();
    await page.getByRole('button', { name: 'Add evidence' }).click();
    await page.getByRole('menuitem', { name: 'Notes' }).click();
    await page.waitForURL('**/evidence-details');
    const addLocation = page.getByRole('checkbox', { name: 'Add my location' });
    await addLocation.waitFor();
    expect(await addLocation.getAttribute('aria-describedby')).toBeTruthy();
    await page
      .getByText(
        'Administrators see your exact position. If this evidence is published, the public archive shows it only to within about 111 m.',
      )
      .waitFor();
  });

  it('a moderator publishes everything a search matches, also what is not loaded yet', async () => {
    const sightings: string[] = [];
    for (let index = 1; index <= 60; index += 1) {
      const created = await informant.client.post('/api/evidence', { title: `Sighting ${index}`, notes: 'A grey van by the quay.' });
      sightings.push(created.data.id);
    }
    const other = await informant.client.post('/api/evidence', { title: 'Unrelated', notes: 'A cat.' });
    const page = await pages.open('desktop', admin.cookies.get('portal_session'));
    await page.goto('/admin');
    await page.getByRole('searchbox', { name: 'Search evidence' }).fill('quay');
    const queue = page.getByRole('list', { name: 'Review queue' });
    // The search is applied (a pause after typing): the unrelated new item leaves the list.
    await queue.getByText('Sighting 60', { exact: true }).waitFor();
    await expect.poll(() => queue.getByText('Unrelated').count()).toBe(0);
    expect(await queue.locator('li[data-evidence-id]').count()).toBeLessThan(60);
    await page.getByRole('button', { name: 'Select everything matching' }).click();
    await page.getByText('Selected: every item matching these filters').waitFor();
    // The export of everything matching goes by the filters, not by the ids loaded so far.
    const exportHref = new URL((await page.getByText('Export selected (zip)').getAttribute('href'))!, portal.url);
    expect(Object.fromEntries(exportHref.searchParams)).toEqual({ q: 'quay', review_status: 'new' });
    await page.getByRole('button', { name: 'Publish selected' }).click();
    await page.getByRole('dialog', { name: 'Publish Selected Evidence' }).getByRole('button', { name: 'Confirm' }).click();
    await page.getByRole('alert').filter({ hasText: '60 items made public.' }).waitFor();
    await page.getByText('No evidence matches these filters.').waitFor();
    const published = await admin.get('/api/evidence/admin?visibility=public&q=quay&limit=100');
    expect(published.data.map((item: EvidenceItem) => item.id).sort()).toEqual([...sightings].sort());
    expect((await admin.get(`/api/evidence/item/${other.data.id}`)).data).toMatchObject({ is_public: false, review_status: 'new' });
  });

  it("a moderator downloads the investigator's zip of the items ticked", async () => {
    const page = await pages.open('desktop', admin.cookies.get('portal_session'));
    await page.goto('/admin');
    await page
      .getByRole('group', { name: 'Show' })
      .getByRole('button', { name: /^All \(/ })
      .click();
    await page.getByRole('searchbox', { name: 'Search evidence' }).fill('river');
    const list = page.getByRole('list', { name: 'All evidence' });
    await expect.poll(() => rowTitles(page, 'All evidence')).toEqual(['Lantern parade']);
    const exportButton = page.getByText('Export selected (zip)');
    expect(await exportButton.getAttribute('href')).toBeNull();
    const manifestOf = async () => {
      const [download] = await Promise.all([page.waitForEvent('download'), exportButton.click()]);
      expect(download.suggestedFilename()).toMatch(/\.zip$/);
      const path = await download.path();
      const files = await readZip(await import('node:fs/promises').then((fs) => fs.readFile(path)));
      return JSON.parse(files.get('manifest.json')!.toString()) as { items: { id: string; title: string }[] };
    };
    await list.getByRole('checkbox', { name: 'Select Lantern parade' }).click();
    expect((await manifestOf()).items.map((item) => item.title)).toEqual(['Lantern parade']);
    // Another search: the selection follows it.
    await page.getByRole('searchbox', { name: 'Search evidence' }).fill('midnight');
    await expect.poll(() => rowTitles(page, 'All evidence')).toEqual(['Drum circle']);
    await page.getByRole('checkbox', { name: 'Select all shown' }).check();
    expect((await manifestOf()).items.map((item) => item.title)).toEqual(['Drum circle']);
  });
});
