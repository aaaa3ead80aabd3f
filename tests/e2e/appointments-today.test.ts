// The festival day on screens, on a phone (390x844) and a desktop (1280x900), each screen checked
// with axe: the participant's home page (the appointment's place in the instructions too), the
// performers' Today screen (the call sheet: photo, a number to tap, a landline still callable,
// messages and statuses in words, what is over set apart, shared status within seconds; it opens
// on today in the event's time zone, not the phone's), the import screen (preview, import,
// result, CSV download) and the announcement screen (count, confirmation, result).
import { readFileSync } from 'node:fs';
import { DateTime } from 'luxon';
import type { Locator, Page } from 'playwright-core';
import { describe, expect, it } from 'vitest';
import type { AdminAppointment, CallSheet, MyAppointment } from '@portal/contracts';
import { adminClient, confirmAddress, newParticipant } from '../support/accounts.js';
import { CHROMIUM_MISSING_REASON, chromiumMissing, fitsWidth } from '../support/browser.js';
import { waitForMail } from '../support/outbox.js';
import { PhoneSuite } from '../support/phone.js';
import { violations } from '../support/axe.js';

const phone = new PhoneSuite();
const { pages } = phone;

/** UTC+14: on a phone in UTC-11 (Pago Pago) the calendar day is never the same. */
const ZONE = 'Pacific/Kiritimati';
const PHONE_ZONE = 'Pacific/Pago_Pago';
const CORNER = 'the corner of Default Street and Example Road';
const LIBRARY = 'the entryway of the Screen Library';

/** A wall time in the event's zone, as a form or the box office writes it. */
const wall = (time: DateTime) => time.setZone(ZONE).toFormat("yyyy-MM-dd'T'HH:mm");
const dayOf = (time: DateTime) => time.setZone(ZONE).toISODate()!;

/** Tab goes round inside the dialog and never out of it. */
async function focusStaysIn(page: Page, dialog: Locator, presses = 12): Promise<void> {
  const handle = await dialog.elementHandle();
  for (let press = 0; press < presses; press++) {
    await page.keyboard.press('Tab');
    expect(await page.evaluate((element) => element?.contains(document.activeElement) ?? false, handle)).toBe(true);
  }
}

/** `time`, or one o'clock the next day in the event's zone when `minutes` later is on another day. */
function sameDayStart(time: DateTime, minutes: number): DateTime {
  if (dayOf(time) === dayOf(time.plus({ minutes }))) return time;
  return time.setZone(ZONE).plus({ days: 1 }).startOf('day').plus({ hours: 1 });
}

async function openToday(page: Page, day?: string): Promise<void> {
  await page.goto('/admin?view=today');
  await page
    .getByRole('status')
    .filter({ hasText: /appointments? on|No appointments on/ })
    .waitFor();
  if (day) {
    await page.getByLabel('Day').fill(day);
    await page
      .getByRole('status')
      .filter({ hasText: new RegExp(`on ${DateTime.fromISO(day).toFormat('cccc')},? ${DateTime.fromISO(day).toFormat('d LLLL yyyy')}`) })
      .waitFor();
  }
}

describe.skipIf(chromiumMissing)('appointments on screens', () => {
  if (chromiumMissing) console.warn(CHROMIUM_MISSING_REASON);

  phone.start({
    env: {
      EVENT_TIMEZONE: ZONE,
      APPOINTMENT_REMINDERS: '24h',
      APPOINTMENT_MINUTES: '30',
      STREET_CORNER: CORNER,
      LIBRARY_ENTRYWAY: LIBRARY,
    },
  });

  it("shows the participant's appointment and its place in the instructions, and the performers' call sheet", async () => {
    const participant = await newParticipant(phone.portal.url, {
      phone_number: '2025550123',
      full_name: 'Grace Caller',
      pronouns: 'She/Her',
    });
    const landline = await newParticipant(phone.portal.url, { full_name: 'Lena Landline' });
    // Both confirmed their addresses: their appointments are theirs (name, photo, number).
    await confirmAddress(phone.portal.dataDir, participant);
    await confirmAddress(phone.portal.dataDir, landline);
    const admin = await adminClient(phone.portal.url);
    // Two hours from now, and the landline holder ten minutes later: both, and the end of the
    // second, on one day in the event's zone (near its midnight, one o'clock the next day).
    const start = sameDayStart(DateTime.now().plus({ hours: 2 }), 45);
    const day = dayOf(start);
    const place = 'Bahnhofsvorplatz, under the Donaudampfschifffahrtsgesellschaftskapitänsuhr';
    expect((await admin.client.post('/api/appointments', { email: participant.user.email, start: wall(start), place })).status).toBe(201);
    expect(
      (
        await admin.client.post('/api/appointments', {
          email: landline.user.email,
          start: wall(start.plus({ minutes: 10 })),
          phone: '+49 30 12345678',
        })
      ).status,
    ).toBe(201);

    // The participant's home page: the appointment above the instructions, which name its place
    // instead of the default street corner; long words wrap on the phone.
    for (const kind of ['phone', 'desktop'] as const) {
      const home = await pages.open(kind, participant.client.cookies.get('portal_session'));
      await home.goto('/home');
      const card = home.getByRole('region', { name: 'Your appointment' });
      await card.waitFor();
      await expect(card.getByText(place).count()).resolves.toBe(1);
      // The number that will be called, spaced for reading, and whose it is; the instructions name it too.
      await card.getByText('We will call (202) 555-0123 (the number in your profile).').waitFor();
      expect(await card.getByRole('link', { name: 'Add to calendar' }).getAttribute('href')).toBe('/api/appointments/mine.ics');
      const instructions = home.getByRole('region', { name: 'Your instructions' });
      await instructions.getByText(`stand at ${place} and await a phone call on (202) 555-0123.`, { exact: false }).waitFor();
      expect(await instructions.getByText(CORNER).count()).toBe(0);
      await fitsWidth(home);
      expect(await violations(home)).toEqual([]);
    }
    // The help page's questions answer with the same appointment: its day, its place, its number.
    const help = await pages.open('phone', participant.client.cookies.get('portal_session'));
    await help.goto('/help');
    await help.getByRole('button', { name: 'Where do I meet?' }).click();
    await help.getByText(`Stand at ${place} and wait for a phone call on (202) 555-0123.`).waitFor();
    await help.getByRole('button', { name: 'When is my appointment?' }).click();
    await help.getByText(`Your appointment is on ${start.setZone(ZONE).toFormat('cccc')}`, { exact: false }).waitFor();
    expect(await help.getByText(CORNER, { exact: false }).count()).toBe(0);
    await fitsWidth(help);
    // Without an appointment, the default corner, on the home page and in the help page's answers.
    const other = await pages.signedInPage();
    await other.page.goto('/home');
    await other.page.getByRole('region', { name: 'Your instructions' }).getByText(`stand at ${CORNER}`).waitFor();
    expect(await other.page.getByRole('region', { name: 'Your appointment' }).count()).toBe(0);
    await other.page.goto('/help');
    await other.page.getByRole('button', { name: 'Where do I meet?' }).click();
    await other.page.getByText(`Stand at ${CORNER} and wait for a phone call on the number you gave when you registered.`).waitFor();

    // Two performers' phones on the Today screen. The phones' own zone is a day away from the
    // event's: the screen opens on the event's today all the same.
    const session = admin.client.cookies.get('portal_session')!;
    const first = await pages.open('phone', session, { timezoneId: PHONE_ZONE });
    await openToday(first);
    const today = dayOf(DateTime.now());
    expect(today).not.toBe(DateTime.now().setZone(PHONE_ZONE).toISODate());
    expect(await first.getByLabel('Day').inputValue()).toBe(today);
    await first.getByLabel('Day').fill(day);
    const row = first.getByRole('listitem', { name: /Grace Caller/ });
    await row.waitFor();
    const second = await pages.open('phone', (await adminClient(phone.portal.url)).client.cookies.get('portal_session'));
    await openToday(second, day);
    await second.getByRole('listitem', { name: /Grace Caller/ }).waitFor();

    // A number to tap (E.164 in the link, spaced for reading), the photo, the pronouns.
    const call = row.getByRole('link', { name: /Call Grace Caller/ });
    expect(await call.getAttribute('href')).toBe('tel:+12025550123');
    expect(await call.textContent()).toBe('(202) 555-0123');
    expect(await row.getByRole('img', { name: 'Verification photo of Grace Caller' }).count()).toBe(1);
    await expect(row.getByText('She/Her').count()).resolves.toBe(1);
    // A landline can be called; only its texts are off, with the reason.
    const fixed = first.getByRole('listitem', { name: /Lena Landline/ });
    expect(await fixed.getByRole('link', { name: /Call Lena Landline/ }).getAttribute('href')).toBe('tel:+493012345678');
    await fixed.getByText('+49 30 12345678').waitFor();
    await fixed.getByText('Texts off: not a mobile number (a fixed line cannot take text messages)').waitFor();
    // What each message became, in words, the confirmation first.
    const messages = fixed.getByRole('list', { name: 'Messages' }).getByRole('listitem');
    await expect
      .poll(() => messages.allTextContents(), { timeout: 60_000 })
      .toEqual([
        'Confirmation by e-mail: Sent',
        'Confirmation by text: Not sent: not a mobile number (a fixed line cannot take text messages)',
      ]);
    // Time order, under "Coming up".
    const coming = first.getByRole('region', { name: /Coming up/ });
    const names = await coming
      .getByRole('listitem', { name: /Caller|Landline/ })
      .evaluateAll((items) => items.map((item) => item.getAttribute('aria-label')));
    expect(names.findIndex((name) => name?.includes('Grace'))).toBeLessThan(names.findIndex((name) => name?.includes('Lena')));
    expect(await violations(first)).toEqual([]);

    // A status set on one phone shows on the other at its next poll; the chosen one has its own colour and icon.
    await row.getByRole('button', { name: 'Arrived' }).click();
    await first.waitForFunction(
      () => document.querySelector('[aria-label^="Status of Grace"] [aria-pressed="true"]')?.textContent === 'Arrived',
    );
    await second.waitForFunction(
      () => document.querySelector('[aria-label^="Status of Grace"] [aria-pressed="true"]')?.textContent === 'Arrived',
      undefined,
      { timeout: 15_000 },
    );
    const chosen = row.getByRole('button', { name: 'Arrived' });
    const look = await chosen.evaluate((element) => ({
      background: getComputedStyle(element).backgroundColor,
      icon: element.querySelector('svg') !== null,
    }));
    expect(look).toEqual({ background: 'rgb(46, 125, 50)', icon: true });
    expect(await row.getByRole('button', { name: 'Waiting' }).evaluate((element) => getComputedStyle(element).backgroundColor)).not.toBe(
      look.background,
    );
    expect(await violations(first)).toEqual([]);

    // Made for a phone: nothing wider than the screen, buttons big enough to tap, a Print button.
    await fitsWidth(first);
    const box = await chosen.boundingBox();
    expect(box!.height).toBeGreaterThanOrEqual(44);
    await first.getByRole('button', { name: 'Print' }).waitFor();
    // On paper the status buttons give way to the status written out.
    await first.emulateMedia({ media: 'print' });
    expect(await chosen.isVisible()).toBe(false);
    await row.getByText(/Status: Arrived/).waitFor();

    // Once an appointment is over (its start and APPOINTMENT_MINUTES passed) it is set apart, on a desktop too.
    const desktop = await pages.open('desktop', session);
    await desktop.clock.setFixedTime(start.plus({ minutes: 35 }).toJSDate());
    await openToday(desktop, day);
    const past = desktop.getByRole('region', { name: /^Past/ });
    await past.getByRole('listitem', { name: /Grace Caller \(past\)/ }).waitFor();
    await desktop
      .getByRole('region', { name: /Coming up/ })
      .getByRole('listitem', { name: /Lena Landline/ })
      .waitFor();
    expect(await violations(desktop)).toEqual([]);
  }, 150_000);

  it('imports the box office CSV from the Today screen: preview, import, result, CSV download', async () => {
    const admin = await adminClient(phone.portal.url);
    const session = admin.client.cookies.get('portal_session')!;
    const day = dayOf(DateTime.now().plus({ days: 3 }));
    const tag = Date.now().toString(36);
    const moving = `moving_${tag}@example.org`;
    const pending = `pending_${tag}@example.org`;
    expect((await admin.client.post('/api/appointments', { email: moving, start: `${day}T17:00` })).status).toBe(201);
    const csv = [
      'email,start,name,phone,place',
      `${pending},${day} 18:00,Zoë Ñúñez-Wolkenkratzerfensterputzerin,+49 30 12345678,Gate 3`,
      `${moving},${day} 17:30,Mo Ving,,`,
      `nobody_${tag}@example.org,${day} 25:00,No Body,,`,
      `${pending},${day} 19:00,Twice,,`,
      // A cell a spreadsheet would run, quoted back in the refusal's message.
      `"x;=cmd|' /C calc'!A0",${day} 18:00,,,`,
    ].join('\n');

    const page = await pages.open('phone', session);
    await openToday(page);
    await page.getByRole('button', { name: 'Import CSV' }).click();
    const dialog = page.getByRole('dialog', { name: 'Import appointments' });
    // Each request to the import is held until the test lets it go, to see the progress shown meanwhile.
    let release: () => void = () => undefined;
    await page.route('**/api/appointments/import**', async (route) => {
      await new Promise<void>((resolve) => (release = resolve));
      await route.continue();
    });
    const [chooser] = await Promise.all([
      page.waitForEvent('filechooser'),
      dialog.getByRole('button', { name: 'Choose a CSV file' }).click(),
    ]);
    await chooser.setFiles({ name: 'box-office.csv', mimeType: 'text/csv', buffer: Buffer.from(csv) });
    await dialog.getByRole('progressbar', { name: 'Checking the file' }).waitFor();
    await dialog.getByRole('status').filter({ hasText: 'Checking box-office.csv: reading every line…' }).waitFor();
    release();

    // The preview: what will happen, line by line, nothing imported yet.
    await dialog.getByRole('heading', { name: 'What the import will do' }).waitFor();
    await dialog.getByText('Nothing is imported yet. Importing box-office.csv will give: 1 created, 1 moved, 3 refused.').waitFor();
    const table = dialog.getByRole('table', { name: 'What the import will do, line by line' });
    const rows = async () => (await table.getByRole('row').allInnerTexts()).slice(1).map((text) => text.replace(/\s+/g, ' ').trim());
    const planned = await rows();
    expect(planned).toHaveLength(5);
    expect(planned[0]).toMatch(/^2 Will be created Zoë Ñúñez-Wolkenkratzerfensterputzerin · pending_.* 18:00/);
    expect(planned[1]).toMatch(/^3 Will be moved Mo Ving · moving_.* 17:30 .*\(was .* 17:00 /);
    expect(planned[2]).toMatch(/^4 Will be refused Not a date and time "[^"]+ 25:00" is not a date and time/);
    expect(planned[3]).toMatch(/^5 Will be refused Address given twice .* already has an appointment on line 2/);
    expect(((await admin.client.get(`/api/appointments?date=${day}`)).data as CallSheet).appointments.map((entry) => entry.email)).toEqual([
      moving,
    ]);
    await fitsWidth(page);
    expect(await violations(page)).toEqual([]);
    await focusStaysIn(page, dialog);

    // Only the refused lines, then the import, with its progress, by keyboard.
    await dialog.getByRole('button', { name: 'Refused (3)' }).click();
    expect(await rows()).toHaveLength(3);
    await dialog.getByRole('button', { name: 'Import 2 appointments' }).focus();
    await page.keyboard.press('Enter');
    // While it imports: the progress, and nothing closes the dialog.
    await dialog.getByRole('progressbar', { name: 'Importing' }).waitFor();
    await dialog.getByRole('status').filter({ hasText: 'Importing 2 appointments from box-office.csv…' }).waitFor();
    expect(await dialog.getByRole('button', { name: 'Cancel' }).isDisabled()).toBe(true);
    await page.keyboard.press('Escape');
    expect(await dialog.isVisible()).toBe(true);
    release();
    await dialog.getByRole('heading', { name: 'Imported' }).waitFor();
    await page.unroute('**/api/appointments/import**');
    await dialog.getByText('box-office.csv is imported: 1 created, 1 moved, 3 refused.').waitFor();
    const done = dialog.getByRole('table', { name: 'What the import did, line by line' });
    expect((await done.getByRole('row').allInnerTexts()).slice(1).map((text) => text.split(/\s+/).slice(0, 2).join(' '))).toEqual([
      '2 Created',
      '3 Moved',
      '4 Refused',
      '5 Refused',
      '6 Refused',
    ]);
    expect(await violations(page)).toEqual([]);

    // The result as CSV: every line, the refusals' reasons in words.
    const [download] = await Promise.all([
      page.waitForEvent('download'),
      dialog.getByRole('link', { name: 'Download the result (CSV)' }).click(),
    ]);
    expect(download.suggestedFilename()).toBe('box-office-import-result.csv');
    const saved = readFileSync((await download.path())!, 'utf8');
    const lines = saved
      .replace(/^\ufeff/, '')
      .trim()
      .split('\r\n');
    expect(lines[0]).toBe(`"line","outcome","email","name","start (${ZONE})","previous start (${ZONE})","reason","message"`);
    expect(lines.slice(1).map((line) => line.split(',').slice(0, 2).join(','))).toEqual([
      '2,"created"',
      '3,"moved"',
      '4,"refused"',
      '5,"refused"',
      '6,"refused"',
    ]);
    expect(lines[3]).toContain('"Not a date and time"');
    expect(lines[1]).toContain('"Zoë Ñúñez-Wolkenkratzerfensterputzerin"');
    // No cell a spreadsheet would take for a formula, however it splits the lines.
    for (const separator of [',', ';', '\t'])
      for (const line of lines)
        expect(line.split(separator).filter((cell) => /^[=+\-@]/.test(cell.replace(/^"/, '').trimStart()))).toEqual([]);

    // Closed: the call sheet of that day shows the ticket holder who has not registered by the box office's name and number.
    await dialog.getByRole('button', { name: 'Close' }).click();
    await dialog.waitFor({ state: 'detached' });
    await page.getByLabel('Day').fill(day);
    const row = page.getByRole('listitem', { name: /Zoë Ñúñez-Wolkenkratzerfensterputzerin/ });
    await row.getByText(`Not registered yet: ${pending}`).waitFor();
    expect(await row.getByRole('link', { name: /^Call / }).getAttribute('href')).toBe('tel:+493012345678');
    // Registered with that address but not confirmed yet: still the box office's name and number, and the sheet says why.
    await newParticipant(phone.portal.url, { email: pending, full_name: 'Someone Else', phone_number: '2025550123' });
    await row.getByText(`Registered, address not confirmed yet: ${pending}`).waitFor({ timeout: 15_000 });
    expect(await row.getByRole('link', { name: /^Call / }).getAttribute('href')).toBe('tel:+493012345678');
    expect(await page.getByText('Someone Else').count()).toBe(0);
    await fitsWidth(page);

    // On a desktop: the preview of a file that changes nothing, with nothing to import.
    const desktop = await pages.open('desktop', session);
    await openToday(desktop);
    await desktop.getByRole('button', { name: 'Import CSV' }).click();
    const wide = desktop.getByRole('dialog', { name: 'Import appointments' });
    const [picker] = await Promise.all([
      desktop.waitForEvent('filechooser'),
      wide.getByRole('button', { name: 'Choose a CSV file' }).click(),
    ]);
    await picker.setFiles({ name: 'again.csv', mimeType: 'text/csv', buffer: Buffer.from(csv.split('\n').slice(0, 3).join('\n')) });
    await wide.getByText('Nothing to import: 2 unchanged.').waitFor();
    expect(await wide.getByRole('button', { name: 'Import 0 appointments' }).isDisabled()).toBe(true);
    expect(await violations(desktop)).toEqual([]);
    await desktop.keyboard.press('Escape');
    await wide.waitFor({ state: 'detached' });
  }, 120_000);

  it('announces bad weather or its own words to a time range: the count first, a confirmation, then the result', async () => {
    const admin = await adminClient(phone.portal.url);
    const session = admin.client.cookies.get('portal_session')!;
    const day = dayOf(DateTime.now().plus({ days: 5 }));
    const tag = Date.now().toString(36);
    const emails = ['early', 'mid', 'late'].map((who) => `${who}_${tag}@example.org`);
    // Only the middle one has a mobile number: the others get the announcement by e-mail alone.
    for (const [index, email] of emails.entries())
      expect(
        (
          await admin.client.post('/api/appointments', {
            email,
            start: `${day}T${17 + index}:30`,
            ...(index === 1 ? { phone: '2025550150' } : {}),
          })
        ).status,
      ).toBe(201);

    const page = await pages.open('phone', session);
    await openToday(page, day);
    await page.getByRole('button', { name: 'Announce' }).click();
    const dialog = page.getByRole('dialog', { name: 'Announce' });
    expect(await dialog.getByLabel('Day').inputValue()).toBe(day);
    // The ready text, written out by the server, and whom the day reaches.
    await dialog.getByText(`please wait in ${LIBRARY} instead of at your appointment's place`, { exact: false }).waitFor();
    await dialog.getByText(/It reaches 3 participants with an appointment on .* each by e-mail, and 1 of them by text too\./).waitFor();
    // A time range narrows it (the same selection the announcement is sent to).
    await dialog.getByLabel('From').fill('18:00');
    await dialog.getByLabel('Until').fill('20:00');
    await dialog.getByText(/It reaches 2 participants with an appointment on .* from 18:00 until 20:00/).waitFor();
    await dialog.getByRole('radio', { name: 'My own words' }).check();
    const words = 'The north gate is closed today: please come to the south gate. Thank you!';
    await dialog.getByRole('textbox', { name: 'Your message' }).fill(words);
    await fitsWidth(page);
    expect(await violations(page)).toEqual([]);
    await focusStaysIn(page, dialog);

    // Nothing goes before the confirmation.
    await dialog.getByRole('button', { name: 'Send to 2 participants' }).click();
    const confirm = page.getByRole('dialog', { name: 'Send this announcement?' });
    await confirm.getByText(words).waitFor();
    await confirm.getByText(/get this, each by e-mail, and 1 of them by text too\. It cannot be called back\./).waitFor();
    await focusStaysIn(page, confirm, 4);
    expect(await violations(page)).toEqual([]);
    await confirm.getByRole('button', { name: 'Cancel' }).click();
    await confirm.waitFor({ state: 'detached' });
    await dialog.getByRole('button', { name: 'Send to 2 participants' }).click();
    await confirm.getByRole('button', { name: 'Send to 2 participants' }).click();
    await dialog.getByRole('heading', { name: 'Sent' }).waitFor();
    await dialog
      .getByText('The announcement is on its way to 2 participants, each by e-mail, and 1 of them by text too.', { exact: false })
      .waitFor();
    expect(await violations(page)).toEqual([]);
    for (const email of emails.slice(1)) {
      const mail = await waitForMail(phone.portal.dataDir, email, { subject: /a message about your appointment/i, timeoutMs: 30_000 });
      expect(mail.text).toContain('the south gate');
    }
    await dialog.getByRole('button', { name: 'Close' }).click();
    // Each one's announcement shows on the call sheet, in words.
    const mid = page.getByRole('listitem', { name: new RegExp(emails[1]!.replace('.', '\\.')) });
    await mid.getByText('Announcement by e-mail: Sent').waitFor({ timeout: 60_000 });

    // On a desktop: an empty message is refused under its field, before any confirmation.
    const desktop = await pages.open('desktop', session);
    await openToday(desktop, day);
    await desktop.getByRole('button', { name: 'Announce' }).click();
    const wide = desktop.getByRole('dialog', { name: 'Announce' });
    await wide.getByText(/It reaches 3 participants/).waitFor();
    await wide.getByRole('radio', { name: 'My own words' }).check();
    await wide.getByRole('button', { name: 'Send to 3 participants' }).click();
    await wide.getByText('The message is empty').waitFor();
    expect(await desktop.getByRole('dialog', { name: 'Send this announcement?' }).count()).toBe(0);
    expect(await violations(desktop)).toEqual([]);
  }, 120_000);

  it("sets, moves and cancels an account's appointment from the user dialog", async () => {
    const participant = await newParticipant(phone.portal.url, { full_name: 'Dora Dialog' });
    const admin = await adminClient(phone.portal.url);
    const page = await pages.open('phone', admin.client.cookies.get('portal_session'));
    await page.goto('/admin?view=users');
    await page.getByRole('button', { name: `Info about ${participant.user.username}` }).click();
    const info = page.getByRole('dialog', { name: 'User Information' });
    const section = info.getByRole('region', { name: 'Appointment' });
    await section.getByText('No appointment yet.').waitFor();
    await section.getByLabel(/^Time/).fill('2030-07-01T18:30');
    await section.getByRole('textbox', { name: 'Place' }).fill('South gate');
    await section.getByRole('button', { name: 'Set appointment' }).click();
    await section.getByText(/The appointment is set/).waitFor();
    // Pending under the address until the participant confirms it: the dialog says so, and the
    // profile's number is not the one to call yet (only a number the box office gave would be).
    await section.getByText(/1 July 2030 at 18:30.*South gate\. No number to call: no phone number is on file/).waitFor();
    await section.getByText(/^Address not confirmed yet/).waitFor();
    expect(((await participant.client.get('/api/appointments/mine')).data as MyAppointment).appointment).toBeNull();
    await confirmAddress(phone.portal.dataDir, participant);
    expect(((await participant.client.get('/api/appointments/mine')).data as MyAppointment).appointment).toMatchObject({
      place: 'South gate',
      version: 1,
    });

    await section.getByLabel(/^Time/).fill('2030-07-02T19:15');
    await section.getByRole('button', { name: 'Save appointment' }).click();
    // Confirmed: the account's number is the one to call (this one is no valid number), and the dialog says whose it is.
    await section.getByText(/2 July 2030 at 19:15.*No number to call: "5551234567" is not a valid phone number/).waitFor();
    await section.getByText(/^Address confirmed/).waitFor();
    expect(((await participant.client.get('/api/appointments/mine')).data as MyAppointment).appointment).toMatchObject({ version: 2 });
    expect(await violations(page)).toEqual([]);

    await section.getByRole('button', { name: 'Cancel appointment' }).click();
    await section.getByText('No appointment yet.').waitFor();
    expect(((await participant.client.get('/api/appointments/mine')).data as MyAppointment).appointment).toBeNull();
    expect(
      ((await admin.client.get(`/api/appointments/user/${participant.user.id}`)).data as { appointment: AdminAppointment | null })
        .appointment,
    ).toBeNull();
  }, 90_000);
});
