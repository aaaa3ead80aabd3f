// The festival day in a browser on a phone: the participant's home page shows the appointment
// with "Add to calendar"; a performer's Today screen (the call sheet) shows the photo, a number
// to tap, what cannot be texted, and a status that another performer's phone sees within seconds.
import { describe, expect, it } from 'vitest';
import { adminClient, confirmAddress, newParticipant } from '../support/accounts.js';
import { CHROMIUM_MISSING_REASON, chromiumMissing } from '../support/browser.js';
import { PhoneSuite } from '../support/phone.js';
import { violations } from '../support/axe.js';

const phone = new PhoneSuite();
const { pages } = phone;

describe.skipIf(chromiumMissing)('appointments on a phone', () => {
  if (chromiumMissing) console.warn(CHROMIUM_MISSING_REASON);

  phone.start({ env: { EVENT_TIMEZONE: 'UTC', APPOINTMENT_REMINDERS: '24h' } });

  it("shows the participant's appointment, and the performers' call sheet with tap-to-call and shared status", async () => {
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
    // Two hours from now (UTC, the event's zone here), and the landline holder ten minutes later.
    const start = new Date(Date.now() + 2 * 3600_000);
    const wall = (date: Date) => date.toISOString().slice(0, 16);
    const day = start.toISOString().slice(0, 10);
    expect(
      (await admin.client.post('/api/appointments', { email: participant.user.email, start: wall(start), place: 'Main St & 1st Ave' }))
        .status,
    ).toBe(201);
    expect(
      (
        await admin.client.post('/api/appointments', {
          email: landline.user.email,
          start: wall(new Date(start.getTime() + 600_000)),
          phone: '+49 30 12345678',
        })
      ).status,
    ).toBe(201);

    // The participant's home page: the appointment above the instructions, and the calendar link.
    const home = await pages.open('phone', participant.client.cookies.get('portal_session'));
    await home.goto('/home');
    const card = home.getByRole('region', { name: 'Your appointment' });
    await card.waitFor();
    await expect(card.getByText('Main St & 1st Ave').count()).resolves.toBe(1);
    expect(await card.getByRole('link', { name: 'Add to calendar' }).getAttribute('href')).toBe('/api/appointments/mine.ics');
    await home.getByRole('region', { name: 'Your instructions' }).waitFor();
    expect(await violations(home)).toEqual([]);

    // Two performers' phones on the Today screen.
    const session = admin.client.cookies.get('portal_session')!;
    const first = await pages.open('phone', session);
    const second = await pages.open('phone', (await adminClient(phone.portal.url)).client.cookies.get('portal_session'));
    for (const page of [first, second]) {
      await page.goto('/admin?view=today');
      await page.getByLabel('Day').fill(day);
      await page.getByRole('listitem', { name: /Grace Caller/ }).waitFor();
    }
    const row = first.getByRole('listitem', { name: /Grace Caller/ });
    expect(await row.getByRole('link', { name: /Call Grace Caller/ }).getAttribute('href')).toBe('tel:+12025550123');
    expect(await row.getByRole('img', { name: 'Verification photo of Grace Caller' }).count()).toBe(1);
    await expect(row.getByText('She/Her').count()).resolves.toBe(1);
    const fixed = first.getByRole('listitem', { name: /Lena Landline/ });
    await fixed.getByText(/No number to call or text: .*fixed line/).waitFor();
    // Time order.
    const names = await first.getByRole('listitem').evaluateAll((items) => items.map((item) => item.getAttribute('aria-label')));
    expect(names.findIndex((name) => name?.includes('Grace'))).toBeLessThan(names.findIndex((name) => name?.includes('Lena')));

    expect(await violations(first)).toEqual([]);

    // A status set on one phone shows on the other at its next poll.
    await row.getByRole('button', { name: 'Arrived' }).click();
    await first.waitForFunction(
      () => document.querySelector('[aria-label^="Status of Grace"] [aria-pressed="true"]')?.textContent === 'Arrived',
    );
    await second.waitForFunction(
      () => document.querySelector('[aria-label^="Status of Grace"] [aria-pressed="true"]')?.textContent === 'Arrived',
      undefined,
      { timeout: 15_000 },
    );

    // Made for a phone: nothing wider than the screen, buttons big enough to tap, a Print button.
    expect(await first.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(390);
    const box = await row.getByRole('button', { name: 'Arrived' }).boundingBox();
    expect(box!.height).toBeGreaterThanOrEqual(44);
    await first.getByRole('button', { name: 'Print' }).waitFor();
    // On paper the status buttons give way to the status written out.
    await first.emulateMedia({ media: 'print' });
    expect(await row.getByRole('button', { name: 'Arrived' }).isVisible()).toBe(false);
    await row.getByText(/Status: Arrived/).waitFor();
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
    await section.getByText(/1 July 2030 at 18:30.*South gate/).waitFor();
    // Pending under the address until the participant confirms it: the dialog says so.
    await section
      .getByText(/not confirmed/i)
      .first()
      .waitFor();
    expect((await participant.client.get('/api/appointments/mine')).data.appointment).toBeNull();
    await confirmAddress(phone.portal.dataDir, participant);
    expect((await participant.client.get('/api/appointments/mine')).data.appointment).toMatchObject({ place: 'South gate', version: 1 });

    await section.getByLabel(/^Time/).fill('2030-07-02T19:15');
    await section.getByRole('button', { name: 'Save appointment' }).click();
    await section.getByText(/2 July 2030 at 19:15/).waitFor();
    expect((await participant.client.get('/api/appointments/mine')).data.appointment).toMatchObject({ version: 2 });
    expect(await violations(page)).toEqual([]);

    await section.getByRole('button', { name: 'Cancel appointment' }).click();
    await section.getByText('No appointment yet.').waitFor();
    expect((await participant.client.get('/api/appointments/mine')).data.appointment).toBeNull();
  }, 90_000);
});
