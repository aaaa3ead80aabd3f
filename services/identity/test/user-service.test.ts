import { readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEFAULT_TERMS_VERSION, MESSAGES } from '@portal/contracts';
import { waitFor } from '@portal/platform/testing';
import { SessionService } from '../src/domain/session-service.js';
import {
  ROLE_ADMIN,
  ROLE_USER,
  callerOf,
  refusalOf,
  registration,
  startEmbeddedIdentity,
  type EmbeddedIdentity,
} from './support/embedded-identity.js';

// The identity domain's rules on the embedded adapters (a SQLite file, the SQLite bus, the file
// blob store), wired by service.ts's own helpers.
let identity: EmbeddedIdentity;
beforeAll(async () => {
  identity = await startEmbeddedIdentity();
});
afterAll(() => identity?.close());

const users = () => identity.users;
const register = async (name: string, overrides: Parameters<typeof registration>[1] = {}) =>
  users().register(registration(name, overrides), await identity.photo());

async function admin(name: string) {
  const request = registration(name);
  expect(await users().ensureAdmin(request)).toBe('created');
  return (await identity.stores.users.findByUsername(name))!;
}

describe('registering', () => {
  it('makes a participant (never an administrator) with the photo stored and no note left over', async () => {
    const user = await register('ada', {
      terms_version: DEFAULT_TERMS_VERSION,
    });
    expect(user).toMatchObject({
      role: ROLE_USER,
      video_watched: false,
      email_verified: false,
      terms_version: DEFAULT_TERMS_VERSION,
    });
    expect(user.terms_accepted_at).not.toBeNull();
    expect(await identity.blobs.stat(user.verification_photo_key!)).not.toBeNull();
    expect(await identity.stores.users.blobIntents.olderThan(new Date(Date.now() + 60_000).toISOString(), 10)).toEqual([]);
    const verification = await waitFor(
      () => identity.events.find((event) => event.type === 'email-verification.requested' && event.key === user.id),
      {
        what: 'the verification e-mail event',
      },
    );
    // The link is sealed in the event: only the services can read it, and it verifies the address.
    const token = identity.unseal((verification.data as { sealedToken: string }).sealedToken);
    expect(await users().verifyEmail(token)).toBe(true);
    expect((await identity.stores.users.findById(user.id))?.email_verified).toBe(true);
  });

  it('refuses terms of an earlier version, a registration without a photo, and a name or address already taken', async () => {
    expect(await refusalOf(register('old-terms', { terms_version: 'an-older-version' }))).toMatchObject({
      status: 400,
      message: MESSAGES.termsChanged,
    });
    expect(await refusalOf(users().register(registration('no-photo'), undefined))).toMatchObject({
      status: 400,
      message: MESSAGES.photoRequired,
    });
    await register('taken');
    expect(await refusalOf(register('taken', { email: 'other@example.org' }))).toMatchObject({
      status: 409,
      message: MESSAGES.usernameTaken,
    });
    expect(await refusalOf(register('other', { email: 'taken@example.org' }))).toMatchObject({ status: 409, message: MESSAGES.emailTaken });
    for (const name of ['old-terms', 'no-photo', 'other']) expect(await identity.stores.users.findByUsername(name)).toBeNull();
  });

  it('makes one account of two registrations of the same username at once, the other refused as taken, its photo gone', async () => {
    const outcomes = await Promise.allSettled([
      register('twin', { email: 'twin1@example.org' }),
      register('twin', { email: 'twin2@example.org' }),
    ]);
    const made = outcomes.filter((outcome) => outcome.status === 'fulfilled');
    const refused = outcomes.filter((outcome): outcome is PromiseRejectedResult => outcome.status === 'rejected');
    expect(made).toHaveLength(1);
    expect(refused).toHaveLength(1);
    expect(refused[0]!.reason).toMatchObject({
      status: 409,
      message: MESSAGES.usernameTaken,
    });
    // Every account folder of pictures belongs to an account: the refused one's photo went.
    const pictures = await readdir(join(identity.dir, 'blobs', 'data', 'users'), { recursive: true, withFileTypes: true });
    for (const picture of pictures.filter((entry) => entry.isFile())) {
      expect(await identity.stores.users.findById(picture.parentPath.split('/').at(-1)!), `the owner of ${picture.name}`).not.toBeNull();
    }
    expect(await identity.stores.users.blobIntents.olderThan(new Date(Date.now() + 60_000).toISOString(), 10)).toEqual([]);
  });
});

describe('logging in', () => {
  it('answers the same refusal for a wrong password and an unknown account, and a new session every time', async () => {
    const user = await register('grace');
    const wrong = await refusalOf(users().login('grace', 'not the password'));
    const unknown = await refusalOf(users().login('nobody-here', 'correct horse battery'));
    expect(wrong).toMatchObject({
      status: 401,
      message: MESSAGES.loginMismatch,
    });
    expect(unknown).toMatchObject({
      status: 401,
      message: MESSAGES.loginMismatch,
    });

    const first = await users().login('grace@example.org', 'correct horse battery');
    expect(first.user.id).toBe(user.id);
    expect(await identity.sessions.resolve(first.sessionRawId)).not.toBeNull();
    // A session planted before login (its id known to someone else) ends with the login.
    const second = await users().login('grace', 'correct horse battery', SessionService.hashId(first.sessionRawId));
    expect(second.sessionRawId).not.toBe(first.sessionRawId);
    expect(await identity.sessions.resolve(first.sessionRawId)).toBeNull();
    expect(await identity.sessions.resolve(second.sessionRawId)).not.toBeNull();
  });
});

describe('changing the e-mail address', () => {
  it('asks for the current password, refuses a wrong one, then unverifies the address and tells the old one', async () => {
    const user = await register('linus');
    const caller = callerOf(user);
    const update = {
      email: 'linus.new@example.org',
      phone_number: user.phone_number,
      pronouns: '' as const,
    };
    expect(await refusalOf(users().updateProfile(caller, update, undefined))).toMatchObject({
      status: 400,
      message: MESSAGES.currentPasswordRequired,
    });
    expect(await refusalOf(users().updateProfile(caller, { ...update, current_password: 'guess' }, undefined))).toMatchObject({
      status: 400,
      message: MESSAGES.currentPasswordWrong,
    });
    expect((await identity.stores.users.findById(user.id))?.email).toBe('linus@example.org');

    const changed = await users().updateProfile(caller, { ...update, current_password: 'correct horse battery' }, undefined);
    expect(changed).toMatchObject({
      email: 'linus.new@example.org',
      email_verified: false,
    });
    const notice = await waitFor(() => identity.events.find((event) => event.type === 'account.notice' && event.key === user.id), {
      what: 'the notice to the old address',
    });
    expect(notice.data).toMatchObject({
      notice: 'email-changed',
      email: 'linus@example.org',
      newEmail: 'linus.new@example.org',
    });
  });

  it('keeps the phone number change without a password (the address did not change)', async () => {
    const user = await register('margaret');
    const changed = await users().updateProfile(callerOf(user), { email: user.email, phone_number: '0987654321', pronouns: '' }, undefined);
    expect(changed.phone_number).toBe('0987654321');
  });
});

describe('roles and ownership', () => {
  it("lets a participant mark only their own onboarding video watched; an administrator anyone's", async () => {
    const [one, two] = [await register('vid-one'), await register('vid-two')];
    expect(await refusalOf(users().markVideoWatched(callerOf(one), two.id))).toMatchObject({ status: 403, message: MESSAGES.notYours });
    expect((await identity.stores.users.findById(two.id))?.video_watched).toBe(false);
    expect((await users().markVideoWatched(callerOf(one), one.id)).video_watched).toBe(true);
    const boss = await admin('vid-admin');
    expect((await users().markVideoWatched(callerOf(boss), two.id)).video_watched).toBe(true);
  });

  it('shows a verification photo to its owner and administrators only', async () => {
    const [owner, other] = [await register('photo-owner'), await register('photo-other')];
    const boss = await admin('photo-admin');
    expect(await refusalOf(users().pictureFor(undefined, owner.id, 'verification-photo'))).toMatchObject({ status: 401 });
    expect(await refusalOf(users().pictureFor(callerOf(other), owner.id, 'verification-photo'))).toMatchObject({ status: 403 });
    expect((await users().pictureFor(callerOf(owner), owner.id, 'verification-photo')).key).toBe(owner.verification_photo_key);
    expect((await users().pictureFor(callerOf(boss), owner.id, 'verification-photo')).key).toBe(owner.verification_photo_key);
  });

  it('deletes an account with its sessions and pictures, but never the deleting administrator nor the last administrator', async () => {
    const boss = await admin('the-admin');
    expect(await refusalOf(users().deleteUser(callerOf(boss), boss.id))).toMatchObject({ status: 400, message: MESSAGES.cannotDeleteSelf });

    const victim = await register('leaving');
    const { sessionRawId } = await users().login('leaving', 'correct horse battery');
    await users().deleteUser(callerOf(boss), victim.id);
    expect(await identity.stores.users.findById(victim.id)).toBeNull();
    expect(await identity.sessions.resolve(sessionRawId)).toBeNull();
    expect(await identity.blobs.stat(victim.verification_photo_key!)).toBeNull();
    await waitFor(() => identity.events.find((event) => event.type === 'user.deleted' && event.key === victim.id), {
      what: 'the deletion event',
    });

    // Two administrators: one may delete the other, and then the last one stays.
    const second = await admin('second-admin');
    const admins = await identity.stores.users.countAdmins();
    const others = (await identity.stores.users.list(500)).items.filter((user) => user.role === ROLE_ADMIN && user.id !== second.id);
    for (const other of others) await users().deleteUser(callerOf(second), other.id);
    expect(admins).toBeGreaterThan(1);
    expect(await identity.stores.users.countAdmins()).toBe(1);
    // The rule is about the account deleted (who may delete at all is the HTTP layer's role check).
    expect(await refusalOf(users().deleteUser(callerOf(boss), second.id))).toMatchObject({ status: 400, message: MESSAGES.lastAdmin });
    expect(await identity.stores.users.findById(second.id)).not.toBeNull();
  });
});
