import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll } from 'vitest';
import { infrastructureFromEnv } from '@portal/platform';
import { openIdentityStores } from '../src/service.js';
import { auditLogContract } from './contracts/audit-log-contracts.js';
import { scheduleStoreContract } from './contracts/schedule-store-contracts.js';
import { appointmentStoreContract } from './contracts/appointment-store-contracts.js';
import { resetCodeStoreContract, resetGuessingContract, sampleUser, sessionStoreContract, userRepositoryContract } from './contracts/identity-store-contracts.js';

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
