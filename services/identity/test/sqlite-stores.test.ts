import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, describe, expect, it } from 'vitest';
import { infrastructureFromEnv } from '@portal/platform';
import { identityDatabaseFile } from '../src/config.js';
import { openIdentityStores } from '../src/service.js';
import { DuplicateUserError } from '../src/repositories/user-repository.js';
import { auditLogContract } from './contracts/audit-log-contracts.js';
import { scheduleStoreContract } from './contracts/schedule-store-contracts.js';
import { appointmentStoreContract } from './contracts/appointment-store-contracts.js';
import {
  resetCodeStoreContract,
  resetGuessingContract,
  sampleUser,
  sessionStoreContract,
  userRepositoryContract,
} from './contracts/identity-store-contracts.js';

const dir = mkdtempSync(join(tmpdir(), 'identity-stores-'));
const stores = await openIdentityStores(infrastructureFromEnv({ DATA_DIR: dir }));
afterAll(async () => {
  await stores.close();
  rmSync(dir, { recursive: true, force: true });
});

userRepositoryContract('SQLite', async () => stores.users);
sessionStoreContract('SQLite', async () => stores.sessions);
resetCodeStoreContract('SQLite', async () => ({
  codes: stores.resetCodes,
  withUser: async () => {
    const user = sampleUser();
    await stores.users.create(user, []);
    return user.id;
  },
}));
auditLogContract('SQLite', async () => stores.audit);
scheduleStoreContract('SQLite', async () => stores.schedule);
resetGuessingContract('SQLite', async () => ({ users: stores.users, codes: stores.resetCodes, sessions: stores.sessions }));
appointmentStoreContract('SQLite', async () => stores.appointments);

describe('usernames kept before they had a key (SQLite)', () => {
  it('get their key when the store opens; two older look-alikes both stay, and a new one is refused', async () => {
    const older = mkdtempSync(join(tmpdir(), 'identity-older-'));
    try {
      const first = await openIdentityStores(infrastructureFromEnv({ DATA_DIR: older }));
      const owl = sampleUser({ username: 'nightowl_older' });
      const twin = sampleUser({ username: 'nightowI_older', created_at: new Date(Date.now() + 1000).toISOString() });
      await first.users.create(owl, []);
      await first.users.create(sampleUser({ username: 'Zoë_older' }), []);
      await first.close();
      // As a database written before the key existed: no keys, and a look-alike pair that got in.
      const db = new Database(identityDatabaseFile(older));
      db.prepare('UPDATE users SET username_key = NULL').run();
      db.prepare(
        `INSERT INTO users (id, username, full_name, email, phone_number, pronouns, role, password_hash, video_watched, email_verified, created_at, updated_at)
                  VALUES (@id, @username, @full_name, @email, @phone_number, '', 1, 'x', 0, 0, @created_at, @created_at)`,
      ).run(twin);
      db.close();

      const reopened = await openIdentityStores(infrastructureFromEnv({ DATA_DIR: older }));
      try {
        expect((await reopened.users.findByUsername('NIGHTOWL_OLDER'))?.id).toBe(owl.id);
        expect((await reopened.users.findById(twin.id))?.username).toBe('nightowI_older');
        await expect(reopened.users.create(sampleUser({ username: 'ZOË_OLDER' }), [])).rejects.toEqual(new DuplicateUserError('username'));
        await expect(reopened.users.create(sampleUser({ username: 'night0wl_older' }), [])).rejects.toEqual(
          new DuplicateUserError('username'),
        );
      } finally {
        await reopened.close();
      }
    } finally {
      rmSync(older, { recursive: true, force: true });
    }
  });
});
