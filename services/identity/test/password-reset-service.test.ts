import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MESSAGES } from '@portal/contracts';
import { waitFor } from '@portal/platform/testing';
import { MAX_RESET_ATTEMPTS, refusalOf, registration, startEmbeddedIdentity, type EmbeddedIdentity } from './support/embedded-identity.js';

// Password reset by e-mailed code, on the embedded adapters: the code is read the way the
// notifier reads it (sealed in the password-reset.requested event on the bus).
let identity: EmbeddedIdentity;
beforeAll(async () => {
  identity = await startEmbeddedIdentity();
});
afterAll(() => identity?.close());

const resets = () => identity.resets;
const PASSWORD = 'correct horse battery';
const NEW_PASSWORD = 'a brand new passphrase';

async function account(name: string) {
  return identity.users.register(registration(name), await identity.photo());
}

/** Asks for a code and answers the one e-mailed (the newest for this address). */
async function codeFor(email: string): Promise<string> {
  const before = identity.events.filter((event) => event.type === 'password-reset.requested').length;
  await resets().sendCode(email);
  const sent = await waitFor(
    () => {
      const all = identity.events.filter((event) => event.type === 'password-reset.requested');
      return all.length > before ? all.at(-1) : undefined;
    },
    { what: 'the reset code event' },
  );
  expect(sent.data).toMatchObject({ email });
  return identity.unseal((sent.data as { sealedCode: string }).sealedCode);
}

/** A six-digit code that is not this one. */
const other = (code: string) => String(((Number(code) + 1) % 900_000) + 100_000);

describe('password reset', () => {
  it('sets the new password with the e-mailed code, ends every session, and the code works once only', async () => {
    await account('reset-ok');
    const { sessionRawId } = await identity.users.login('reset-ok', PASSWORD);
    const code = await codeFor('reset-ok@example.org');
    expect(code).toMatch(/^\d{6}$/);
    expect(await resets().checkCode('reset-ok@example.org', code)).toBe(true);
    await resets().updatePassword('reset-ok@example.org', code, NEW_PASSWORD);

    expect(await identity.sessions.resolve(sessionRawId)).toBeNull();
    expect(await refusalOf(identity.users.login('reset-ok', PASSWORD))).toMatchObject({ status: 401 });
    expect((await identity.users.login('reset-ok', NEW_PASSWORD)).user.username).toBe('reset-ok');
    expect(await refusalOf(resets().updatePassword('reset-ok@example.org', code, 'yet another passphrase'))).toMatchObject({
      status: 400,
      message: MESSAGES.incorrectCode,
    });
    await waitFor(
      () =>
        identity.events.find(
          (event) => event.type === 'account.notice' && (event.data as { notice: string }).notice === 'password-changed',
        ),
      {
        what: 'the notice that the password changed',
      },
    );
  });

  it(`kills the code after ${MAX_RESET_ATTEMPTS} wrong tries: the right code is refused after them`, async () => {
    await account('reset-guessed');
    const code = await codeFor('reset-guessed@example.org');
    for (let i = 0; i < MAX_RESET_ATTEMPTS; i++) expect(await resets().checkCode('reset-guessed@example.org', other(code))).toBe(false);
    expect(await resets().checkCode('reset-guessed@example.org', code)).toBe(false);
    expect(await refusalOf(resets().updatePassword('reset-guessed@example.org', code, NEW_PASSWORD))).toMatchObject({ status: 400 });
    expect((await identity.users.login('reset-guessed', PASSWORD)).user.username).toBe('reset-guessed');
  });

  it('lets fewer wrong tries than the limit pass, and a right check does not spend a try', async () => {
    await account('reset-almost');
    const code = await codeFor('reset-almost@example.org');
    for (let i = 0; i < MAX_RESET_ATTEMPTS - 1; i++) expect(await resets().checkCode('reset-almost@example.org', other(code))).toBe(false);
    expect(await resets().checkCode('reset-almost@example.org', code)).toBe(true);
    expect(await resets().checkCode('reset-almost@example.org', code)).toBe(true);
    await resets().updatePassword('reset-almost@example.org', code, NEW_PASSWORD);
  });

  it('compares at most the allowed number of guesses when many arrive at once', async () => {
    await account('reset-flood');
    const code = await codeFor('reset-flood@example.org');
    // Thirty wrong guesses at once, then the right one: none of them may have been compared beyond the limit.
    const guesses = await Promise.all(Array.from({ length: 30 }, () => resets().checkCode('reset-flood@example.org', other(code))));
    expect(guesses.every((matched) => !matched)).toBe(true);
    expect(await resets().checkCode('reset-flood@example.org', code)).toBe(false);
  });

  it('refuses a code once it has expired', async () => {
    await account('reset-late');
    const code = await codeFor('reset-late@example.org');
    identity.advance(15 * 60_000 + 1000); // RESET_CODE_TTL_MINUTES' default
    try {
      expect(await resets().checkCode('reset-late@example.org', code)).toBe(false);
      expect(await refusalOf(resets().updatePassword('reset-late@example.org', code, NEW_PASSWORD))).toMatchObject({
        status: 400,
        message: MESSAGES.incorrectCode,
      });
    } finally {
      identity.advance(-(15 * 60_000 + 1000));
    }
  });

  it('replaces an earlier code with a new one, and refuses an address with no account', async () => {
    await account('reset-twice');
    const first = await codeFor('reset-twice@example.org');
    const second = await codeFor('reset-twice@example.org');
    if (first !== second) expect(await resets().checkCode('reset-twice@example.org', first)).toBe(false);
    expect(await resets().checkCode('reset-twice@example.org', second)).toBe(true);
    expect(await refusalOf(resets().sendCode('nobody@example.org'))).toMatchObject({ status: 404, message: MESSAGES.noAccountForEmail });
  });
});
