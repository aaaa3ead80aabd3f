import { join } from 'node:path';
import Database from 'better-sqlite3';
import { simpleParser } from 'mailparser';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MESSAGES, TOPICS } from '@portal/contracts';
import { SqliteEventBus } from '@portal/platform';
import { startSmtpCatcher, waitFor } from '@portal/platform/testing';
import { ApiClient } from '../support/api-client.js';
import { newParticipant, publishedEvents } from '../support/accounts.js';
import { codeIn, readOutbox, waitForMail } from '../support/outbox.js';
import { startTestPortal, type TestPortal } from '../support/portal.js';

let portal: TestPortal;
let clockOffset = 0;
beforeAll(async () => {
  portal = await startTestPortal({ PUBLIC_URL: 'https://portal.example.org' }, undefined, { clock: () => Date.now() + clockOffset });
});
afterAll(() => portal.dispose());

const visitor = () => new ApiClient(portal.url);
const resetMail = (email: string, count = 1) => waitForMail(portal.dataDir, email, { count, subject: /reset code/ });

describe('password reset', () => {
  it('goes from the e-mail to a new password, ending every session of the account', async () => {
    const { client, user, password } = await newParticipant(portal.url);
    expect((await visitor().post('/api/email/check-email', { email: user.email })).data).toEqual({ exists: true });
    expect((await visitor().post('/api/email/check-email', { email: 'nobody@example.org' })).data).toEqual({ exists: false });

    expect((await visitor().post('/api/email/send', { email: user.email })).status).toBe(200);
    const mail = await resetMail(user.email);
    const code = codeIn(mail);
    expect(Number(code)).toBeGreaterThanOrEqual(100000);
    expect(mail.subject).toContain('Operation Test');
    expect(mail.html).toContain(code);
    expect(mail.text).toContain(`https://portal.example.org/reset-password-code?email=${encodeURIComponent(user.email)}`);
    expect(mail.subject).not.toContain(code);
    // The code never travels in plain text on the bus.
    expect(JSON.stringify(publishedEvents(portal.dataDir))).not.toContain(code);

    const wrong = code === '123456' ? '654321' : '123456';
    expect((await visitor().post('/api/email/check/reset-code', { email: user.email, code: wrong })).data).toEqual({ codeMatches: false });
    expect((await visitor().post('/api/email/check/reset-code', { email: user.email, code })).data).toEqual({ codeMatches: true });

    const updated = await visitor().put('/api/user/passwordupdated', { email: user.email, code, password: 'brand-new-pass' });
    expect(updated.status).toBe(200);
    expect(updated.data.message).toBe(MESSAGES.passwordUpdated);
    expect((await client.get('/api/user')).status).toBe(401);
    expect((await visitor().post('/api/user/login', { username: user.username, password })).status).toBe(401);
    expect((await visitor().post('/api/user/login', { username: user.username, password: 'brand-new-pass' })).status).toBe(200);

    const reused = await visitor().put('/api/user/passwordupdated', { email: user.email, code, password: 'another-pass' });
    expect(reused.status).toBe(400);
    expect(reused.data.message).toBe(MESSAGES.incorrectCode);

    // The account's address is told, without the new password.
    const notice = await waitForMail(portal.dataDir, user.email, { subject: /password was changed/ });
    expect(notice.text).toContain('Your password was changed');
    expect(notice.text).not.toContain('brand-new-pass');
    expect(notice.html).toContain('reset-password');
  });

  it("sends a code to an address not yet confirmed (the decision of docs/SECURITY.md), and only to the account's own address", async () => {
    const { client, user } = await newParticipant(portal.url);
    expect((await client.get('/api/user')).data.email_verified).toBe(false);
    expect((await visitor().post('/api/email/send', { email: user.email })).status).toBe(200);
    const mail = await resetMail(user.email);
    expect(mail.to).toBe(user.email);
    // Moving the code to another address needs the password first (the profile test shows it).
    expect(
      (await client.put('/api/evidence/user', { email: `thief_${user.email}`, phone_number: '5551234567', pronouns: '' })).status,
    ).toBe(400);
  });

  it('accepts the legacy array bodies, and ignores a code the client made', async () => {
    const { user } = await newParticipant(portal.url);
    expect((await visitor().post('/api/email/send', ['111111', user.email])).status).toBe(200);
    const code = codeIn(await resetMail(user.email));
    if (code !== '111111') {
      expect((await visitor().post('/api/email/check/reset-code', { email: user.email, code: '111111' })).data.codeMatches).toBe(false);
    }
    const response = await visitor().put('/api/user/passwordupdated', [{ email: user.email, code, password: 'legacy-pass-1' }]);
    expect(response.status).toBe(200);
    expect((await visitor().post('/api/user/login', { username: user.email, password: 'legacy-pass-1' })).status).toBe(200);
  });

  it('lets a code expire after 15 minutes', async () => {
    const { user } = await newParticipant(portal.url);
    await visitor().post('/api/email/send', { email: user.email });
    const code = codeIn(await resetMail(user.email));
    clockOffset = 15 * 60_000 + 1000;
    try {
      expect((await visitor().post('/api/email/check/reset-code', { email: user.email, code })).data.codeMatches).toBe(false);
      expect((await visitor().put('/api/user/passwordupdated', { email: user.email, code, password: 'too-late-pass' })).status).toBe(400);
    } finally {
      clockOffset = 0;
    }
  });

  it('kills a code after five wrong tries', async () => {
    const { user } = await newParticipant(portal.url);
    await visitor().post('/api/email/send', { email: user.email });
    const code = codeIn(await resetMail(user.email));
    const wrong = code === '999999' ? '888888' : '999999';
    for (let i = 0; i < 5; i++) {
      expect((await visitor().post('/api/email/check/reset-code', { email: user.email, code: wrong })).data.codeMatches).toBe(false);
    }
    expect((await visitor().post('/api/email/check/reset-code', { email: user.email, code })).data.codeMatches).toBe(false);
  });

  it('replaces the code when another is requested', async () => {
    const { user } = await newParticipant(portal.url);
    await visitor().post('/api/email/send', { email: user.email });
    const first = codeIn(await resetMail(user.email));
    expect((await visitor().put('/api/email/reset-code', { email: user.email, code: '000000' })).status).toBe(200);
    const second = codeIn(await resetMail(user.email, 2));
    if (first !== second) {
      expect((await visitor().post('/api/email/check/reset-code', { email: user.email, code: first })).data.codeMatches).toBe(false);
    }
    expect((await visitor().post('/api/email/check/reset-code', { email: user.email, code: second })).data.codeMatches).toBe(true);
  });

  it('answers bad input with 4xx and the messages of the spec', async () => {
    const missing = await visitor().post('/api/email/send', { email: 'nobody-here@example.org' });
    expect(missing.status).toBe(404);
    expect(missing.data.message).toBe(MESSAGES.noAccountForEmail);
    expect((await visitor().post('/api/email/send', { email: 'not an email' })).data.message).toBe(MESSAGES.invalidEmail);
    expect((await visitor().post('/api/email/check/reset-code', { email: 'a@example.org', code: '12ab' })).data.message).toBe(
      MESSAGES.resetCodeInvalid,
    );
    const { user } = await newParticipant(portal.url);
    await visitor().post('/api/email/send', { email: user.email });
    const code = codeIn(await resetMail(user.email));
    const short = await visitor().put('/api/user/passwordupdated', { email: user.email, code, password: 'short' });
    expect(short.status).toBe(400);
    expect(short.data.message).toBe(MESSAGES.passwordTooShort);
    // A refused password does not use up the code.
    expect((await visitor().post('/api/email/check/reset-code', { email: user.email, code })).data.codeMatches).toBe(true);
  });

  it('sends one e-mail for an event delivered twice', async () => {
    const { user } = await newParticipant(portal.url);
    await visitor().post('/api/email/send', { email: user.email });
    const mail = await resetMail(user.email);
    const event = publishedEvents(portal.dataDir).find((e) => e.value.type === 'password-reset.requested' && e.key === user.id)!;
    const bus = new SqliteEventBus({ file: join(portal.dataDir, 'bus.sqlite'), logger: pino({ level: 'silent' }) });
    await bus.publish(TOPICS.passwordResets, [{ key: event.key, value: event.value as never }]);
    await bus.close();
    await waitFor(() => publishedEvents(portal.dataDir).filter((e) => e.value.id === event.value.id).length === 2, {
      what: 'the duplicate on the bus',
    });
    // The notifier's consumer group has handled the duplicate (its offset moved past it)...
    await waitFor(
      () => committedOffset(portal.dataDir, 'notifier', TOPICS.passwordResets) >= lastOffset(portal.dataDir, TOPICS.passwordResets),
      {
        what: 'the notifier to consume the duplicate',
      },
    );
    // ...and its mail queue has had time to run anything new.
    await new Promise((resolve) => setTimeout(resolve, 1500));
    const copies = (await readOutbox(portal.dataDir)).filter((m) => m.messageId === mail.messageId);
    expect(copies.length).toBe(1);
  });
});

describe('e-mail address confirmation', () => {
  it('mails a link on registration that confirms the address and lands on /verify-email', async () => {
    const { client, user } = await newParticipant(portal.url);
    const mail = await waitForMail(portal.dataDir, user.email, { subject: /Confirm your e-mail/ });
    const link = /https:\/\/portal\.example\.org(\/api\/user\/verify-email\?token=[^\s"<]+)/.exec(mail.text)![1]!;
    expect((await client.get('/api/user')).data.email_verified).toBe(false);
    const followed = await visitor().get(link);
    expect(followed.status).toBe(303);
    expect(followed.headers.get('location')).toBe('/verify-email?status=verified');
    expect((await client.get('/api/user')).data.email_verified).toBe(true);
    const forged = await visitor().get(`${link.slice(0, -4)}AAAA`);
    expect(forged.headers.get('location')).toBe('/verify-email?status=invalid');
  });

  it('does not confirm an address the account no longer has', async () => {
    const { client, user, password } = await newParticipant(portal.url);
    const mail = await waitForMail(portal.dataDir, user.email, { subject: /Confirm your e-mail/ });
    const link = /(\/api\/user\/verify-email\?token=[^\s"<]+)/.exec(mail.text)![1]!;
    await client.put('/api/evidence/user', {
      email: `moved_${user.email}`,
      phone_number: '5551234567',
      pronouns: '',
      current_password: password,
    });
    expect((await visitor().get(link)).headers.get('location')).toBe('/verify-email?status=invalid');
    await waitForMail(portal.dataDir, `moved_${user.email}`, { subject: /Confirm your e-mail/ });
  });
});

describe('abuse limits', () => {
  let limited: TestPortal;
  beforeAll(async () => {
    limited = await startTestPortal({ AUTH_RATE_LIMITS: 'true', REGISTER_RATE_LIMIT_PER_MINUTE: '10' });
  });
  afterAll(() => limited.dispose());

  it('stops password guessing on one account after ten failures, with a 429 and a clear message', async () => {
    const { user, password } = await newParticipant(limited.url);
    const api = new ApiClient(limited.url);
    for (let i = 0; i < 10; i++)
      expect((await api.post('/api/user/login', { username: user.username, password: 'wrong-guess' })).status).toBe(401);
    const refused = await api.post('/api/user/login', { username: user.username, password });
    expect(refused.status).toBe(429);
    expect(refused.data).toEqual({ code: 'rate_limited', message: MESSAGES.tooManyRequests });
    expect(refused.headers.get('ratelimit-policy') ?? refused.headers.get('ratelimit')).toBeTruthy();
    // Another account from the same address is not locked out.
    const other = await newParticipant(limited.url);
    expect((await api.post('/api/user/login', { username: other.user.username, password: other.password })).status).toBe(200);
  });

  it('stops the guesser at ten failures, while the owner still logs in from another address', async () => {
    const { user, password } = await newParticipant(limited.url);
    const stranger = new ApiClient(limited.url);
    for (let i = 0; i < 10; i++)
      expect((await stranger.post('/api/user/login', { username: user.username, password: `guess-${i}` })).status).toBe(401);
    expect((await stranger.post('/api/user/login', { username: user.username, password: 'guess-10' })).status).toBe(429);
    // Even the right password, from the guesser's address: guessing there is over for 15 minutes.
    expect((await stranger.post('/api/user/login', { username: user.username, password })).status).toBe(429);
    // The owner, on another network, is not locked out of their own account.
    const owner = new ApiClient(limited.url, { fromAddress: '127.0.0.2' });
    const signedIn = await owner.post('/api/user/login', { username: user.username, password });
    expect(signedIn.status).toBe(200);
    expect(signedIn.data.id).toBe(user.id);
    expect((await owner.post('/api/user/login', { username: user.email, password })).status).toBe(200);
  });

  it('counts reset-code guesses against the account the request acts on, whatever decoy addresses the body carries', async () => {
    const { user } = await newParticipant(limited.url);
    const api = new ApiClient(limited.url);
    // Twenty tries per account in 15 minutes; a legacy array body with a fresh decoy address each time.
    for (let i = 0; i < 20; i++) {
      const body = [{ email: user.email, code: '123456', password: 'guessed-pass-1' }, `decoy${i}@example.org`];
      expect((await api.put('/api/user/passwordupdated', body)).status).toBe(400);
    }
    const decoyed = await api.put('/api/user/passwordupdated', [
      { email: user.email, code: '123456', password: 'guessed-pass-1' },
      'decoy-new@example.org',
    ]);
    expect(decoyed.status).toBe(429);
    expect((await api.post('/api/email/check/reset-code', { email: user.email, code: '123456' })).status).toBe(429);
  });

  it('stops guessing the password through the e-mail change after ten wrong ones', async () => {
    const { client, user, password } = await newParticipant(limited.url);
    const change = (current_password: string) =>
      client.put('/api/evidence/user', { email: `elsewhere_${user.email}`, phone_number: '5551234567', pronouns: '', current_password });
    // Refusals for other reasons do not count.
    for (let i = 0; i < 12; i++)
      expect((await client.put('/api/evidence/user', { email: user.email, phone_number: '12', pronouns: '' })).status).toBe(400);
    for (let i = 0; i < 10; i++) expect((await change(`guess-${i}`)).status).toBe(400);
    const stopped = await change(password);
    expect(stopped.status).toBe(429);
    expect(stopped.data.message).toBe(MESSAGES.tooManyRequests);
  });

  it('sends at most five codes an hour for one address', async () => {
    const { user } = await newParticipant(limited.url);
    const api = new ApiClient(limited.url);
    for (let i = 0; i < 5; i++) expect((await api.post('/api/email/send', { email: user.email })).status).toBe(200);
    expect((await api.post('/api/email/send', { email: user.email })).status).toBe(429);
    expect((await api.put('/api/email/reset-code', { email: user.email })).status).toBe(429);
  });
});

describe('mail over SMTP', () => {
  it('delivers the reset code to a real SMTP server when SMTP_URL is set', async () => {
    const smtp = await startSmtpCatcher();
    const viaSmtp = await startTestPortal({ SMTP_URL: smtp.url, MAIL_FROM: 'Portal <no-reply@portal.test>' });
    try {
      const { user } = await newParticipant(viaSmtp.url);
      await new ApiClient(viaSmtp.url).post('/api/email/send', { email: user.email });
      const mail = await waitFor(
        async () => {
          for (const raw of smtp.messages) {
            const parsed = await simpleParser(raw);
            if (parsed.subject?.includes('reset code')) return parsed;
          }
          return null;
        },
        { what: 'the reset e-mail at the SMTP server' },
      );
      expect(mail.text).toMatch(/\b\d{6}\b/);
      expect(mail.from?.text).toContain('no-reply@portal.test');
      expect(await readOutbox(viaSmtp.dataDir)).toEqual([]);
    } finally {
      await viaSmtp.dispose();
      await smtp.close();
    }
  });
});

function committedOffset(dataDir: string, group: string, topic: string): number {
  const db = new Database(join(dataDir, 'bus.sqlite'), { readonly: true });
  try {
    return (
      (
        db.prepare('SELECT offset FROM consumer_offsets WHERE group_id = ? AND topic = ?').get(group, topic) as
          { offset: number } | undefined
      )?.offset ?? 0
    );
  } finally {
    db.close();
  }
}

function lastOffset(dataDir: string, topic: string): number {
  const db = new Database(join(dataDir, 'bus.sqlite'), { readonly: true });
  try {
    return (db.prepare('SELECT MAX(offset) AS max FROM messages WHERE topic = ?').get(topic) as { max: number }).max;
  } finally {
    db.close();
  }
}
