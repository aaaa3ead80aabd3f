import { randomUUID } from 'node:crypto';
import { pino } from 'pino';
import { describe, expect, it, vi } from 'vitest';
import { SealedBox, createEvent } from '@portal/platform';
import { PasswordResetService } from '../../src/domain/password-reset-service.js';
import { PasswordHasher } from '../../src/domain/passwords.js';
import { SessionService } from '../../src/domain/session-service.js';
import type { UserRecord } from '../../src/domain/user-record.js';
import { DuplicateUserError, type ResetCodeStore, type SessionStore, type UserRepository } from '../../src/repositories/user-repository.js';

export function sampleUser(overrides: Partial<UserRecord> = {}): UserRecord {
  const tag = randomUUID().slice(0, 8);
  const now = new Date().toISOString();
  return {
    id: randomUUID(),
    username: `user_${tag}`,
    full_name: 'Sample Person',
    email: `user_${tag}@example.org`,
    phone_number: '5551234567',
    pronouns: '',
    role: 1,
    password_hash: '$argon2id$fake',
    verification_photo_key: null,
    avatar_key: null,
    video_watched: false,
    email_verified: false,
    sms_reminders: true,
    terms_version: '2026-07',
    terms_accepted_at: now,
    created_at: now,
    updated_at: now,
    ...overrides,
  };
}

const event = (key: string, type = 'user.updated') => ({
  topic: 'identity.users',
  event: createEvent({ type, key, data: { userId: key } }),
});

/** The contract of the user repository, for every adapter (SQLite, MongoDB). */
export function userRepositoryContract(name: string, create: () => Promise<UserRepository>): void {
  describe(`UserRepository contract: ${name}`, () => {
    it('stores, finds by id, username and e-mail (any case), and never answers a missing user', async () => {
      const users = await create();
      const user = sampleUser({ username: `MixedCase_${randomUUID().slice(0, 6)}`, video_watched: true });
      await users.create(user, [event(user.id, 'user.registered')]);
      expect(await users.findById(user.id)).toEqual(user);
      expect((await users.findByUsername(user.username.toLowerCase()))?.id).toBe(user.id);
      expect((await users.findByEmail(user.email.toUpperCase()))?.id).toBe(user.id);
      expect(await users.findById(randomUUID())).toBeNull();
      expect(await users.findByUsername('nobody_at_all_here')).toBeNull();
    });

    it('finds the accounts of many addresses in one go (any case), leaving out addresses without one and deleted accounts', async () => {
      const users = await create();
      const [first, second, third, gone] = Array.from({ length: 4 }, () => sampleUser());
      for (const account of [first!, second!, third!, gone!]) await users.create(account, []);
      await users.delete(gone!.id, []);
      const found = await users.findByEmails([
        first!.email.toUpperCase(),
        second!.email,
        `nobody_${randomUUID().slice(0, 8)}@example.org`,
        second!.email.toUpperCase(),
        gone!.email,
      ]);
      expect(found.map((user) => user.id).sort()).toEqual([first!.id, second!.id].sort());
      expect(found.find((user) => user.id === first!.id)).toEqual(first);
      expect(await users.findByEmails([])).toEqual([]);
      // More addresses than one query of either database takes comfortably: each is answered.
      const many = Array.from({ length: 2500 }, (_, index) => `many_${index}_${randomUUID().slice(0, 8)}@example.org`);
      expect(await users.findByEmails([...many, third!.email])).toEqual([third]);
    });

    it('refuses a second account with the same username or e-mail, whatever the case, and stores nothing of it', async () => {
      const users = await create();
      const first = sampleUser();
      await users.create(first, []);
      const sameName = sampleUser({ username: first.username.toUpperCase() });
      await expect(users.create(sameName, [event(sameName.id)])).rejects.toEqual(new DuplicateUserError('username'));
      const sameEmail = sampleUser({ email: first.email.toUpperCase() });
      await expect(users.create(sameEmail, [])).rejects.toEqual(new DuplicateUserError('email'));
      expect(await users.findById(sameName.id)).toBeNull();
      const pending = await users.outbox.pending(1000);
      expect(pending.some((entry) => entry.event.key === sameName.id)).toBe(false);
    });

    it('keeps names of any script, and refuses one that only looks like a taken name (case and confusable characters folded)', async () => {
      const users = await create();
      const tag = randomUUID().slice(0, 6).replace(/[0-9]/g, 'k');
      const zoe = sampleUser({ username: `Zoë_${tag}` });
      await users.create(zoe, []);
      expect((await users.findById(zoe.id))?.username).toBe(`Zoë_${tag}`);
      // The same name in capitals, decomposed (e + combining diaeresis) or with a Cyrillic о.
      for (const lookalike of [`ZOË_${tag.toUpperCase()}`, `Zoe\u0308_${tag}`, `Z\u043eë_${tag}`]) {
        await expect(users.create(sampleUser({ username: lookalike }), [])).rejects.toEqual(new DuplicateUserError('username'));
        expect((await users.findByUsername(lookalike))?.id).toBe(zoe.id);
      }
      // Without the diaeresis it is another name.
      const zoePlain = sampleUser({ username: `Zoe_${tag}` });
      await users.create(zoePlain, []);
      // Latin 'paypal' and the Cyrillic look-alike; capital I and small l.
      const paypal = sampleUser({ username: `paypal_${tag}` });
      await users.create(paypal, []);
      await expect(users.create(sampleUser({ username: `\u0440\u0430\u0443\u0440\u0430l_${tag}` }), [])).rejects.toEqual(
        new DuplicateUserError('username'),
      );
      const owl = sampleUser({ username: `nightowl_${tag}` });
      await users.create(owl, []);
      await expect(users.create(sampleUser({ username: `nightowI_${tag}` }), [])).rejects.toEqual(new DuplicateUserError('username'));
      // Renaming into a look-alike of someone else's name is refused too; into one's own, allowed.
      await expect(users.update(zoePlain.id, { username: `ZOË_${tag}` }, [])).rejects.toEqual(new DuplicateUserError('username'));
      expect((await users.update(zoe.id, { username: `ZOË_${tag}` }, []))?.username).toBe(`ZOË_${tag}`);
    });

    it('updates only what it is given, and refuses an update into a taken username', async () => {
      const users = await create();
      const user = sampleUser();
      const other = sampleUser();
      await users.create(user, []);
      await users.create(other, []);
      const updated = await users.update(user.id, { full_name: 'New Name', video_watched: true }, [event(user.id)]);
      expect(updated).toEqual({ ...user, full_name: 'New Name', video_watched: true });
      await expect(users.update(user.id, { username: other.username }, [])).rejects.toEqual(new DuplicateUserError('username'));
      expect(await users.update(randomUUID(), { full_name: 'x' }, [])).toBeNull();
    });

    it('deletes a user once', async () => {
      const users = await create();
      const user = sampleUser();
      await users.create(user, []);
      expect(await users.delete(user.id, [event(user.id, 'user.deleted')])).toBe(true);
      expect(await users.delete(user.id, [])).toBe(false);
      expect(await users.findById(user.id)).toBeNull();
    });

    it('keeps the events of each change in the outbox, in order, until they are marked published', async () => {
      const users = await create();
      for (const entry of await users.outbox.pending(10_000)) await users.outbox.markPublished([entry.id]);
      const user = sampleUser();
      await users.create(user, [event(user.id, 'user.registered')]);
      await users.update(user.id, { full_name: 'Changed' }, [event(user.id, 'user.updated')]);
      await users.appendEvents([event(user.id, 'sessions.revoked')]);
      const pending = (await users.outbox.pending(100)).filter((entry) => entry.event.key === user.id);
      expect(pending.map((entry) => entry.event.type)).toEqual(['user.registered', 'user.updated', 'sessions.revoked']);
      expect(pending[0]!.topic).toBe('identity.users');
      await users.outbox.markPublished([pending[0]!.id]);
      expect((await users.outbox.pending(100)).filter((entry) => entry.event.key === user.id).length).toBe(2);
    });

    it('lists every user once, oldest first, a page at a time', async () => {
      const users = await create();
      const base = Date.now();
      const made: UserRecord[] = [];
      for (let i = 0; i < 5; i++) {
        const user = sampleUser({ created_at: new Date(base + i).toISOString() });
        made.push(user);
        await users.create(user, []);
      }
      const seen: string[] = [];
      let cursor: string | undefined;
      do {
        const page = await users.list(2, cursor);
        expect(page.items.length).toBeLessThanOrEqual(2);
        seen.push(...page.items.map((user) => user.id));
        cursor = page.nextCursor ?? undefined;
      } while (cursor);
      expect(new Set(seen).size).toBe(seen.length);
      const ours = seen.filter((id) => made.some((user) => user.id === id));
      expect(ours).toEqual(made.map((user) => user.id));
    });

    it('counts administrators', async () => {
      const users = await create();
      const before = await users.countAdmins();
      await users.create(sampleUser({ role: 2 }), []);
      await users.create(sampleUser({ role: 3 }), []);
      await users.create(sampleUser({ role: 1 }), []);
      expect(await users.countAdmins()).toBe(before + 2);
    });
  });
}

/** The contract of the session store, for every adapter (SQLite, Redis). */
export function sessionStoreContract(name: string, create: () => Promise<SessionStore>): void {
  describe(`SessionStore contract: ${name}`, () => {
    const session = (userId: string, expiresIn = 60_000) => ({
      id: randomUUID(),
      userId,
      createdAt: Date.now(),
      expiresAt: Date.now() + expiresIn,
    });

    it('finds a live session, extends it, and ends it', async () => {
      const sessions = await create();
      const one = session(randomUUID());
      await sessions.create(one);
      expect(await sessions.find(one.id)).toEqual(one);
      const later = Date.now() + 120_000;
      await sessions.extend(one.id, later);
      expect((await sessions.find(one.id))?.expiresAt).toBe(later);
      expect(await sessions.delete(one.id)).toBe(true);
      expect(await sessions.delete(one.id)).toBe(false);
      expect(await sessions.find(one.id)).toBeNull();
    });

    it('never answers an expired session', async () => {
      const sessions = await create();
      const expired = session(randomUUID(), 300);
      await sessions.create(expired);
      await new Promise((resolve) => setTimeout(resolve, 400));
      expect(await sessions.find(expired.id)).toBeNull();
    });

    it("ends every session of one user and no one else's", async () => {
      const sessions = await create();
      const userId = randomUUID();
      const mine = [session(userId), session(userId)];
      const theirs = session(randomUUID());
      for (const one of [...mine, theirs]) await sessions.create(one);
      expect((await sessions.deleteForUser(userId)).sort()).toEqual(mine.map((one) => one.id).sort());
      for (const one of mine) expect(await sessions.find(one.id)).toBeNull();
      expect(await sessions.find(theirs.id)).not.toBeNull();
    });
  });
}

/**
 * The contract of the reset-code store (SQLite, Redis). `withUser` answers the id of a user the
 * store may refer to (the SQLite table references the users table).
 */
export function resetCodeStoreContract(
  name: string,
  create: () => Promise<{ codes: ResetCodeStore; withUser: () => Promise<string> }>,
): void {
  describe(`ResetCodeStore contract: ${name}`, () => {
    it('keeps one code per user, replaced by the next, and counts attempts down', async () => {
      const { codes, withUser } = await create();
      const userId = await withUser();
      await codes.put({ userId, codeHash: 'aaa', expiresAt: Date.now() + 60_000, attemptsLeft: 5 });
      await codes.put({ userId, codeHash: 'bbb', expiresAt: Date.now() + 60_000, attemptsLeft: 5 });
      expect((await codes.get(userId))?.codeHash).toBe('bbb');
      expect((await codes.takeAttempt(userId, Date.now()))?.attemptsLeft).toBe(4);
      expect(await codes.takeAttempt(userId, Date.now())).toMatchObject({ codeHash: 'bbb', attemptsLeft: 3 });
      expect((await codes.get(userId))?.attemptsLeft).toBe(3);
      await codes.returnAttempt(userId);
      expect((await codes.get(userId))?.attemptsLeft).toBe(4);
      await codes.delete(userId);
      expect(await codes.get(userId)).toBeNull();
      expect(await codes.takeAttempt(userId, Date.now())).toBeNull();
      await codes.returnAttempt(userId);
      expect(await codes.get(userId)).toBeNull();
    });

    it('takes no attempt from an expired or used-up code, and gives each of concurrent takers its own', async () => {
      const { codes, withUser } = await create();
      const expired = await withUser();
      await codes.put({ userId: expired, codeHash: 'ccc', expiresAt: Date.now() - 1, attemptsLeft: 5 });
      expect(await codes.takeAttempt(expired, Date.now())).toBeNull();
      const userId = await withUser();
      await codes.put({ userId, codeHash: 'ddd', expiresAt: Date.now() + 60_000, attemptsLeft: 5 });
      const taken = await Promise.all(Array.from({ length: 20 }, () => codes.takeAttempt(userId, Date.now())));
      const granted = taken.filter((record) => record !== null);
      expect(granted.map((record) => record.attemptsLeft).sort()).toEqual([0, 1, 2, 3, 4]);
      expect(await codes.takeAttempt(userId, Date.now())).toBeNull();
    });
  });
}

/**
 * Reset-code guessing against a store: the attempts are taken (one atomic step in the store)
 * before a guess is compared, so that concurrent guesses, as many identity replicas or one
 * impatient script send them, still get the code compared at most maxAttempts times.
 */
export function resetGuessingContract(
  name: string,
  create: () => Promise<{ users: UserRepository; codes: ResetCodeStore; sessions: SessionStore }>,
): void {
  describe(`Reset-code guessing: ${name}`, () => {
    it('compares at most five of twenty concurrent wrong guesses, then the code is dead', async () => {
      const { users, codes, sessions } = await create();
      const user = sampleUser();
      await users.create(user, []);
      const secret = 'a-test-secret-of-at-least-thirty-two-characters';
      const resets = new PasswordResetService({
        users,
        codes,
        sessions: new SessionService(sessions, { idleMs: 60_000 }),
        passwords: new PasswordHasher(),
        sealer: new SealedBox(secret),
        secret,
        codeTtlMs: 60_000,
        maxAttempts: 5,
        clock: Date.now,
        logger: pino({ level: 'silent' }),
        onEventsCommitted: () => undefined,
      });
      // A live code that no six digits can match (no guess here may be the right one by luck).
      await codes.put({ userId: user.id, codeHash: '0'.repeat(64), expiresAt: Date.now() + 60_000, attemptsLeft: 5 });
      // Every guess compared is hashed first: counting the hashes counts the comparisons.
      const hashed = vi.spyOn(PasswordResetService.prototype as unknown as { hash: (userId: string, code: string) => string }, 'hash');
      try {
        const guesses = Array.from({ length: 20 }, (_, i) => String(100000 + i));
        const answers = await Promise.all(guesses.map((guess) => resets.checkCode(user.email, guess)));
        expect(answers.every((matches) => matches === false)).toBe(true);
        expect(hashed.mock.calls.length).toBeLessThanOrEqual(5);
        expect(hashed.mock.calls.length).toBeGreaterThan(0);
        expect(await resets.checkCode(user.email, '100020')).toBe(false);
        expect(hashed.mock.calls.length).toBeLessThanOrEqual(5);
      } finally {
        hashed.mockRestore();
      }
    });
  });
}
