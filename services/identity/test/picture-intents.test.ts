import { randomBytes, randomUUID } from 'node:crypto';
import { existsSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pino } from 'pino';
import sharp from 'sharp';
import { afterAll, describe, expect, it } from 'vitest';
import { ROLE_ADMIN } from '@portal/contracts';
import { FsBlobStore, infrastructureFromEnv, type CallerIdentity } from '@portal/platform';
import { buildUserService, openIdentityStores } from '../src/service.js';
import { sampleUser } from './contracts/identity-store-contracts.js';

const dir = mkdtempSync(join(tmpdir(), 'picture-intents-'));
const stores = await openIdentityStores(infrastructureFromEnv({ DATA_DIR: dir }));
afterAll(async () => {
  await stores.close();
  rmSync(dir, { recursive: true, force: true });
});
const blobs = new FsBlobStore(join(dir, 'blobs'));
const { users } = buildUserService({
  stores,
  blobs,
  logger: pino({ level: 'silent' }),
  sessionIdleDays: 14,
  secret: randomBytes(32).toString('hex'),
  onEventsCommitted: () => undefined,
});
const intents = stores.users.blobIntents;

const put = (key: string) => blobs.put(key, Buffer.from(key), { contentType: 'image/jpeg' });
const exists = async (key: string) => (await blobs.stat(key)) !== null;
const notes = async () =>
  (await intents.olderThan(new Date(Date.now() + 60_000).toISOString(), 10_000)).map((intent) => intent.prefix).sort();
/** The keys stored under an account's folder (the file store keeps blobs/data/<key>). */
const storedPictures = (userId: string) => {
  const folder = join(dir, 'blobs', 'data', 'users', userId);
  return existsSync(folder)
    ? readdirSync(folder)
        .map((name) => `users/${userId}/${name}`)
        .sort()
    : [];
};
/** A picture as a browser sends it: a temporary file, which the service removes once read. */
async function upload(width: number, height: number): Promise<{ path: string }> {
  const path = join(dir, `upload-${randomUUID()}.jpg`);
  writeFileSync(
    path,
    await sharp(randomBytes(width * height * 3), { raw: { width, height, channels: 3 } })
      .jpeg()
      .toBuffer(),
  );
  return { path };
}
const callerOf = (user: { id: string; username: string; role: number }): CallerIdentity => ({
  userId: user.id,
  username: user.username,
  role: user.role,
  sessionId: 'test',
});

describe("a participant's pictures", () => {
  it('leave no note behind after a registration, new avatars and a deletion, and only the pictures the account refers to', async () => {
    const tag = randomUUID().slice(0, 8);
    const user = await users.register(
      {
        username: `pic_${tag}`,
        password: 'password1',
        email: `pic_${tag}@example.org`,
        phone_number: '5551234567',
        full_name: 'Pic Person',
        pronouns: '',
      },
      await upload(300, 200),
    );
    expect(await notes()).toEqual([]);
    expect(storedPictures(user.id)).toEqual([user.verification_photo_key]);

    const profile = { email: user.email, phone_number: user.phone_number, pronouns: '' as const };
    const first = await users.updateProfile(callerOf(user), profile, await upload(200, 200));
    const second = await users.updateProfile(callerOf(user), profile, await upload(220, 200));
    expect(second.avatar_key).not.toBe(first.avatar_key);
    expect(await notes()).toEqual([]);
    expect(storedPictures(user.id)).toEqual([user.verification_photo_key, second.avatar_key].sort());

    const other = sampleUser({ verification_photo_key: null });
    await stores.users.create(other, []);
    const withPictures = await users.updateProfile(
      callerOf(other),
      { email: other.email, phone_number: other.phone_number, pronouns: '' },
      await upload(200, 200),
    );
    const admin = sampleUser({ role: ROLE_ADMIN });
    await stores.users.create(admin, []);
    await users.deleteUser(callerOf(admin), other.id);
    expect(await exists(withPictures.avatar_key!)).toBe(false);
    expect(storedPictures(other.id)).toEqual([]);
    expect(await notes()).toEqual([]);
  });

  it('that a dead process was writing or deleting are settled: what the account refers to stays, the rest goes', async () => {
    const key = (userId: string, name: string) => `users/${userId}/${name}`;
    // A registration that died after writing the photo, before the account was saved.
    const unsaved = randomUUID();
    const unsavedPhoto = key(unsaved, 'verification-a1.jpg');
    // A new avatar, the process dead before the account referred to it: the old one stays.
    const before = sampleUser({ verification_photo_key: null, avatar_key: null });
    Object.assign(before, { verification_photo_key: key(before.id, 'verification-b0.jpg'), avatar_key: key(before.id, 'avatar-b1.webp') });
    const beforeNew = key(before.id, 'avatar-b2.webp');
    // A new avatar, the process dead after the account referred to it: the old one goes.
    const after = sampleUser();
    Object.assign(after, { avatar_key: key(after.id, 'avatar-c2.webp') });
    const afterOld = key(after.id, 'avatar-c1.webp');
    // A deletion, the process dead after the account went: every picture of it goes.
    const deleted = randomUUID();
    const deletedPictures = [key(deleted, 'verification-d0.jpg'), key(deleted, 'avatar-d1.webp')];
    // A deletion, the process dead before the account went: it was never done, everything stays.
    const kept = sampleUser();
    Object.assign(kept, { avatar_key: key(kept.id, 'avatar-e1.webp') });
    // A picture nobody noted: not the sweep's business.
    const unnoted = key(randomUUID(), 'avatar-f1.webp');

    for (const user of [before, after, kept]) await stores.users.create(user, []);
    for (const picture of [
      unsavedPhoto,
      before.verification_photo_key!,
      before.avatar_key!,
      beforeNew,
      afterOld,
      after.avatar_key!,
      ...deletedPictures,
      kept.avatar_key!,
      unnoted,
    ]) {
      await put(picture);
    }
    for (const note of [unsavedPhoto, beforeNew, before.avatar_key!, afterOld, after.avatar_key!, `users/${deleted}/`, `users/${kept.id}/`])
      await intents.add(note);

    // Notes made after the given time belong to work that may still be going on.
    expect(await users.sweepPictureIntents(new Date(Date.now() - 60_000))).toBe(0);
    expect(await exists(unsavedPhoto)).toBe(true);
    expect((await notes()).length).toBe(7);

    expect(await users.sweepPictureIntents(new Date(Date.now() + 1000))).toBe(5);
    for (const gone of [unsavedPhoto, beforeNew, afterOld, ...deletedPictures]) expect(await exists(gone), gone).toBe(false);
    for (const stays of [before.verification_photo_key!, before.avatar_key!, after.avatar_key!, kept.avatar_key!, unnoted])
      expect(await exists(stays), stays).toBe(true);
    expect(await stores.users.findById(kept.id)).not.toBeNull();
    expect(await notes()).toEqual([]);
    // Settled once: a second sweep finds nothing to do.
    expect(await users.sweepPictureIntents(new Date(Date.now() + 1000))).toBe(0);
  });
});
