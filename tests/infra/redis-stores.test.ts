import { randomUUID } from 'node:crypto';
import { Redis } from 'ioredis';
import { afterAll, describe, it } from 'vitest';
import { infrastructureFromEnv } from '@portal/platform';
import { openIdentityStores, type IdentityStores } from '../../services/identity/src/service.js';
import { RedisResetCodeStore } from '../../services/identity/src/repositories/redis/redis-reset-code-store.js';
import { RedisSessionStore } from '../../services/identity/src/repositories/redis/redis-session-store.js';
import {
  resetCodeStoreContract,
  resetGuessingContract,
  sessionStoreContract,
} from '../../services/identity/test/contracts/identity-store-contracts.js';
import { infraServers, stopContainers } from '../support/infra-servers.js';

const servers = await infraServers();
let distributedStores: IdentityStores | undefined;
afterAll(async () => {
  redis?.disconnect();
  await distributedStores?.close();
  await stopContainers();
});
const redis = servers.redisUrl ? new Redis(servers.redisUrl, { lazyConnect: false }) : null;

if (redis) {
  const prefix = `contract-${randomUUID().slice(0, 8)}`;
  sessionStoreContract('Redis', async () => new RedisSessionStore(redis, prefix));
  resetCodeStoreContract('Redis', async () => ({ codes: new RedisResetCodeStore(redis, prefix), withUser: async () => randomUUID() }));
}
if (redis && servers.mongoUrl) {
  // As the distributed identity runs: users in MongoDB, reset codes and sessions in Redis.
  resetGuessingContract('MongoDB users, Redis codes', async () => {
    distributedStores ??= await openIdentityStores(
      infrastructureFromEnv({
        MONGO_URL: servers.mongoUrl ?? undefined,
        REDIS_URL: servers.redisUrl ?? undefined,
        DEPLOYMENT_NAMESPACE: `guess-${randomUUID().slice(0, 8)}`,
      }),
    );
    return { users: distributedStores.users, codes: distributedStores.resetCodes, sessions: distributedStores.sessions };
  });
}
if (!redis) {
  describe.skip('SessionStore and ResetCodeStore contracts: Redis — no server (REDIS_URL unset and no Docker)', () =>
    it('skipped', () => undefined));
}
