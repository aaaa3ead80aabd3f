import { randomUUID } from 'node:crypto';
import { Redis } from 'ioredis';
import { afterAll, describe, it } from 'vitest';
import { RedisResetCodeStore } from '../../services/identity/src/repositories/redis/redis-reset-code-store.js';
import { RedisSessionStore } from '../../services/identity/src/repositories/redis/redis-session-store.js';
import { resetCodeStoreContract, sessionStoreContract } from '../../services/identity/test/contracts/identity-store-contracts.js';
import { infraServers, stopContainers } from '../support/infra-servers.js';

const servers = await infraServers();
afterAll(async () => {
  redis?.disconnect();
  await stopContainers();
});
const redis = servers.redisUrl ? new Redis(servers.redisUrl, { lazyConnect: false }) : null;

if (redis) {
  const prefix = `contract-${randomUUID().slice(0, 8)}`;
  sessionStoreContract('Redis', async () => new RedisSessionStore(redis, prefix));
  resetCodeStoreContract('Redis', async () => ({ codes: new RedisResetCodeStore(redis, prefix), withUser: async () => randomUUID() }));
} else {
  describe.skip('SessionStore and ResetCodeStore contracts: Redis — no server (REDIS_URL unset and no Docker)', () => it('skipped', () => undefined));
}
