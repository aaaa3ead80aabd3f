// Someone signed in whose address is not confirmed yet: the home page and the profile say why no
// appointment shows and offer a new link; /verify-email offers one when a link failed. At the
// width of a phone (390×844) and of a desktop (1280×900), with an axe check each.
import { describe, expect, it } from 'vitest';
import { MESSAGES } from '@portal/contracts';
import { adminClient, confirmAddress, newParticipant } from '../support/accounts.js';
import { CHROMIUM_MISSING_REASON, chromiumMissing } from '../support/browser.js';
import { violations } from '../support/axe.js';
import { waitForMail } from '../support/outbox.js';
import { PhoneSuite } from '../support/phone.js';

const phone = new PhoneSuite();
const { pages } = phone;

describe.skipIf(chromiumMissing)('an address not confirmed yet', () => {
  if (chromiumMissing) console.warn(CHROMIUM_MISSING_REASON);

  phone.start({ env: { EVENT_TIMEZONE: 'UTC' } });

  it('says on the home page and the profile why no appointment shows, and sends a new link', async () => {
    const participant = await newParticipant(phone.portal.url, { phone_number: '2025550123' });
    const admin = await adminClient(phone.portal.url);
    expect(
      (await admin.client.post('/api/appointments', { email: participant.user.email, start: '2031-07-01T18:30', place: 'North gate' }))
        .status,
    ).toBe(201);
    for (const kind of ['phone', 'desktop'] as const) {
      const page = await pages.open(kind, participant.client.cookies.get('portal_session'));
      await page.goto('/home');
      const notice = page.getByRole('region', { name: 'Confirm your e-mail address' });
      await notice.waitFor();
      await notice.getByText(MESSAGES.emailNotConfirmed).waitFor();
      expect(await page.getByRole('region', { name: 'Your appointment' }).count()).toBe(0);
      expect(await page.getByText('North gate').count()).toBe(0);
      expect(await violations(page)).toEqual([]);
      await page.goto('/user');
      await page.getByRole('region', { name: 'Confirm your e-mail address' }).waitFor();
      expect(await violations(page)).toEqual([]);
    }

    const page = await pages.open('phone', participant.client.cookies.get('portal_session'));
    await page.goto('/home');
    await page.getByRole('button', { name: 'Send me a new link' }).click();
    await page.getByRole('status').getByText(MESSAGES.newLinkSent).waitFor();
    const mail = await waitForMail(phone.portal.dataDir, participant.user.email, { subject: /confirm/i, count: 2, timeoutMs: 30_000 });
    expect(mail.text).toMatch(/new link/i);

    // Confirmed: the appointment shows, with the number that will be called.
    await confirmAddress(phone.portal.dataDir, participant, 2);
    await page.goto('/home');
    const card = page.getByRole('region', { name: 'Your appointment' });
    await card.waitFor();
    await card.getByText('North gate').waitFor();
    await card.getByText('We will call (202) 555-0123 (the number in your profile).').waitFor();
    expect(await page.getByRole('region', { name: 'Confirm your e-mail address' }).count()).toBe(0);
    expect(await violations(page)).toEqual([]);
  }, 120_000);

  it('offers a new link on /verify-email when a link failed: to the signed-in account, or after logging in', async () => {
    const participant = await newParticipant(phone.portal.url);
    const signedIn = await pages.open('phone', participant.client.cookies.get('portal_session'));
    await signedIn.goto('/verify-email?status=invalid');
    await signedIn.getByText(MESSAGES.verificationLinkInvalid).waitFor();
    await signedIn.getByRole('button', { name: 'Send me a new link' }).click();
    await signedIn.getByRole('status').getByText(MESSAGES.newLinkSent).waitFor();
    expect(await violations(signedIn)).toEqual([]);

    const visitor = await pages.open('desktop');
    await visitor.goto('/verify-email?status=invalid');
    await visitor.getByRole('link', { name: 'Log in to get a new link' }).waitFor();
    expect(await violations(visitor)).toEqual([]);
  }, 60_000);

  it('takes a phone number as people type it on the registration form, without cutting it', async () => {
    const page = await pages.open('phone');
    await page.goto('/registration');
    const field = page.getByRole('textbox', { name: 'Phone Number', exact: true });
    await field.fill('06 3110 0548');
    expect(await field.inputValue()).toBe('06 3110 0548');
  }, 60_000);
});
