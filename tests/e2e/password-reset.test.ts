// The password reset in Chromium, from the Login page's Reset Password button to a login with
// the new password, reading the codes from the portal's outbox; and the e-mail confirmation link.
import { describe, expect, it } from 'vitest';
import { MESSAGES } from '@portal/contracts';
import { newParticipant } from '../support/accounts.js';
import { CHROMIUM_MISSING_REASON, alertWith, chromiumMissing } from '../support/browser.js';
import { codeIn, waitForMail } from '../support/outbox.js';
import { PhoneSuite } from '../support/phone.js';

const phone = new PhoneSuite();
const { pages } = phone;

const openPage = () => pages.open();

const resetMail = (email: string, count = 1) => waitForMail(phone.portal.dataDir, email, { count, subject: /reset code/ });

/** A wrong code that is surely not the right one. */
function wrongCodeFor(code: string): string {
  return code === '123456' ? '654321' : '123456';
}

// A browser test waits on a real browser and a real portal: more time than the default on a busy 2-core machine.
describe.skipIf(chromiumMissing)(
  chromiumMissing ? `password reset (skipped: ${CHROMIUM_MISSING_REASON})` : 'password reset',
  { timeout: 60_000 },
  () => {
    phone.start();

    it('resets the password with the e-mailed code, after a wrong code and another code, and logs in with it', async () => {
      const { client, user, password } = await newParticipant(phone.portal.url);
      await client.put(`/api/user/watched/${user.id}`);
      const page = await openPage();

      await page.goto('/login');
      await page.getByRole('link', { name: 'Reset Password' }).click();
      await page.waitForURL('**/reset-password-email');

      // An address nobody has.
      const email = page.getByRole('textbox', { name: 'Email', exact: true });
      expect(await email.getAttribute('type')).toBe('email');
      expect(await email.getAttribute('required')).not.toBeNull();
      await email.fill('nobody-here@example.org');
      await page.getByRole('button', { name: 'Send Code' }).click();
      await alertWith(page, MESSAGES.noAccountForEmail).waitFor();
      expect(page.url()).toMatch(/\/reset-password-email$/);

      await email.fill(user.email);
      await page.getByRole('button', { name: 'Send Code' }).click();
      await page.waitForURL('**/reset-password-code');
      const firstCode = codeIn(await resetMail(user.email));

      // The address came along; a wrong code is refused.
      const codeEmail = page.getByRole('textbox', { name: 'Email', exact: true });
      expect(await codeEmail.inputValue()).toBe(user.email);
      const code = page.getByRole('textbox', { name: 'Code' });
      await code.fill(wrongCodeFor(firstCode));
      await page.getByRole('button', { name: 'Check Code' }).click();
      await alertWith(page, MESSAGES.incorrectCode).waitFor();
      expect(page.url()).toMatch(/\/reset-password-code$/);

      // Another code replaces the first.
      await page.getByRole('button', { name: 'Request another code' }).click();
      await page.getByRole('status').filter({ hasText: 'new code' }).waitFor();
      const secondCode = codeIn(await resetMail(user.email, 2));
      await code.fill(secondCode);
      await page.getByRole('button', { name: 'Check Code' }).click();
      await page.waitForURL('**/reset-password-page');

      // Both fields required and identical.
      const newPassword = page.getByRole('textbox', { name: 'New Password', exact: true });
      const confirm = page.getByRole('textbox', { name: 'Confirm New Password' });
      await newPassword.fill('brand-new-pass');
      await confirm.fill('brand-new-pasS');
      await page.getByRole('button', { name: 'Update Password' }).click();
      await alertWith(page, MESSAGES.resetPasswordsDoNotMatch).waitFor();
      await newPassword.fill('short');
      await confirm.fill('short');
      await page.getByRole('button', { name: 'Update Password' }).click();
      await alertWith(page, MESSAGES.passwordTooShort).waitFor();
      // The password is never kept in the browser's storage.
      const stored = await page.evaluate(() => JSON.stringify(sessionStorage) + JSON.stringify(localStorage));
      expect(stored).not.toContain('short');
      expect(stored).not.toContain('brand-new-pas');

      await newPassword.fill('brand-new-pass');
      await confirm.fill('brand-new-pass');
      await page.getByRole('button', { name: 'Update Password' }).click();
      await alertWith(page, MESSAGES.passwordUpdated).waitFor();
      await page.waitForURL('**/login');
      expect(await page.evaluate(() => sessionStorage.length)).toBe(0);

      // Every earlier session ended; the old password no longer works, the new one does.
      expect((await client.get('/api/user')).status).toBe(401);
      await page.getByRole('textbox', { name: 'Username or Email' }).fill(user.username);
      await page.getByRole('textbox', { name: 'Password' }).fill(password);
      await page.getByRole('button', { name: 'Login', exact: true }).click();
      await alertWith(page, MESSAGES.loginMismatch).waitFor();
      await page.getByRole('textbox', { name: 'Password' }).fill('brand-new-pass');
      await page.getByRole('button', { name: 'Login', exact: true }).click();
      await page.waitForURL('**/home');
      await page.getByRole('heading', { level: 1, name: `Welcome, ${user.username}` }).waitFor();
    });

    it('takes the code on a page opened from the e-mail link, and asks for the code before a new password', async () => {
      const { user } = await newParticipant(phone.portal.url);
      const page = await openPage();
      // Straight to the last step: the code comes first.
      await page.goto('/reset-password-page');
      await page.getByRole('link', { name: 'Enter the Code' }).waitFor();
      expect(await page.getByRole('textbox', { name: 'New Password', exact: true }).count()).toBe(0);

      const sent = await fetch(`${phone.portal.url}/api/email/send`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ email: user.email }),
      });
      expect(sent.status).toBe(200);
      const mail = await resetMail(user.email);
      expect(mail.text).toContain('/reset-password-code');
      await page.goto('/reset-password-code');
      await page.getByRole('textbox', { name: 'Email', exact: true }).fill(user.email);
      await page.getByRole('textbox', { name: 'Code' }).fill(wrongCodeFor(codeIn(mail)));
      await page.getByRole('button', { name: 'Check Code' }).click();
      await alertWith(page, MESSAGES.incorrectCode).waitFor();
      await page.getByRole('textbox', { name: 'Code' }).fill(codeIn(mail));
      await page.getByRole('button', { name: 'Check Code' }).click();
      await page.waitForURL('**/reset-password-page');
      await page.getByRole('textbox', { name: 'New Password', exact: true }).waitFor();
    });

    it("shows 'Email Verified Successfully!' for the e-mail's confirmation link, and not for a bad link", async () => {
      const { user } = await newParticipant(phone.portal.url);
      const mail = await waitForMail(phone.portal.dataDir, user.email, { subject: /Confirm your e-mail/ });
      const link = /(\/api\/user\/verify-email\?token=[^\s"<]+)/.exec(mail.text)?.[1];
      expect(link).toBeDefined();
      const page = await openPage();

      await page.goto(link!);
      await page.waitForURL('**/verify-email?status=verified');
      await page.getByRole('heading', { level: 1, name: MESSAGES.emailVerified }).waitFor();
      await page.getByText('account is activated').waitFor();
      await page.getByRole('link', { name: 'User Page' }).waitFor();

      await page.goto(`${link!.slice(0, -4)}AAAA`);
      await page.waitForURL('**/verify-email?status=invalid');
      await alertWith(page, MESSAGES.verificationLinkInvalid).waitFor();
      expect(await page.getByText(MESSAGES.emailVerified).count()).toBe(0);

      // The original links carried no status: the page still says the address is confirmed.
      await page.goto('/verify-email');
      await page.getByRole('heading', { level: 1, name: MESSAGES.emailVerified }).waitFor();
    });
  },
);
