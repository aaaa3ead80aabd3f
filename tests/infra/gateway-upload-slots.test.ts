import { randomUUID } from 'node:crypto';
import { createServer, request, type ClientRequest, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildOpenApiDocument } from '@portal/contracts/openapi';
import { createLogger } from '@portal/platform';
import { createGateway, gatewaySettingsFromEnv, type Gateway } from '@portal/gateway';
import { RedisUploadSlots } from '../../services/gateway/src/uploads/upload-slots.js';
import { uploadSlotsContract } from '../../services/gateway/test/contracts/upload-slots-contract.js';
import { ApiClient } from '../support/api-client.js';
import { startTestIdentity, type TestIdentity } from '../support/identity-service.js';
import { infraServers, stopContainers, unreachableRedis } from '../support/infra-servers.js';

// One participant's share of the upload path (UPLOAD_CONCURRENT_PER_PARTICIPANT) across gateway
// replicas: the count is kept in Redis, so a participant whose uploads a load balancer spreads
// over two gateways still has the one share. Identity is the real service; in evidence's place is
// a server that takes upload requests and never answers, so that each upload stays running.

const servers = await infraServers();
const redis = servers.redisUrl ? new Redis(servers.redisUrl, { lazyConnect: false }) : null;
const SECRET = 'upload-slots-test-secret-long-enough-123456';
const ADMIN = { username: 'slotsadmin', email: 'slotsadmin@example.org', password: 'slots-admin-pass-1' };
const SHARE = 2;

if (redis) {
  const prefix = `contract-slots-${randomUUID().slice(0, 8)}:`;
  uploadSlotsContract('Redis', async () => new RedisUploadSlots(redis, prefix), {
    shared: true,
    lapsing: async (ms) => new RedisUploadSlots(redis, `${prefix}lapsing:`, ms),
  });
}

describe.skipIf(!redis)(
  redis ? 'uploads per participant across gateway replicas' : 'uploads per participant across gateway replicas (skipped: no Redis)',
  () => {
    let identity: TestIdentity;
    let evidence: Server;
    const gateways: Gateway[] = [];
    const urls: string[] = [];
    const held: ClientRequest[] = [];
    let cookie: string;

    /** A gateway over the identity service and the silent evidence service, counting uploads in `store`; answers its URL. */
    async function startGateway(store: Redis): Promise<string> {
      const gateway = await createGateway(
        gatewaySettingsFromEnv({
          HOST: '127.0.0.1',
          PORT: '0',
          INTERNAL_SECRET: SECRET,
          IDENTITY_URL: identity.url,
          EVIDENCE_URL: `http://127.0.0.1:${(evidence.address() as AddressInfo).port}`,
          WEB_DIST: identity.dataDir,
          RATE_LIMIT_PER_MINUTE: '0',
          UPLOAD_CONCURRENT_PER_PARTICIPANT: String(SHARE),
        }),
        { logger: createLogger({ service: 'gateway', level: 'silent' }), openapi: buildOpenApiDocument(), redis: store },
      );
      gateways.push(gateway);
      return gateway.start();
    }

    beforeAll(async () => {
      evidence = createServer(() => undefined);
      await new Promise<void>((resolve) => evidence.listen(0, '127.0.0.1', resolve));
      identity = await startTestIdentity({
        INTERNAL_SECRET: SECRET,
        ADMIN_USERNAME: ADMIN.username,
        ADMIN_EMAIL: ADMIN.email,
        ADMIN_PASSWORD: ADMIN.password,
      });
      for (let i = 0; i < 2; i++) urls.push(await startGateway(redis!));
      const api = new ApiClient(urls[0]!);
      expect((await api.post('/api/user/login', { username: ADMIN.username, password: ADMIN.password })).status).toBe(200);
      cookie = `portal_session=${api.cookies.get('portal_session')}`;
    }, 60_000);

    afterAll(async () => {
      for (const req of held) req.destroy();
      for (const gateway of gateways) await gateway.stop();
      await identity?.dispose();
      evidence?.closeAllConnections();
      await new Promise((resolve) => evidence?.close(resolve));
    });

    /** A chunk whose body comes slowly (only its first byte is sent): the upload stays running. */
    function startChunk(url: string): Promise<number | null> {
      return new Promise((resolve) => {
        const req = request(`${url}/api/evidence/uploads/${randomUUID()}`, {
          method: 'PATCH',
          headers: {
            cookie,
            'content-type': 'application/offset+octet-stream',
            'content-length': '1000',
            'tus-resumable': '1.0.0',
            'upload-offset': '0',
          },
        });
        req.on('response', (res) => {
          res.resume();
          resolve(res.statusCode ?? null);
        });
        req.on('error', () => resolve(null));
        req.write('x');
        held.push(req);
        // Still running after a moment: taken, and passed on to the service.
        setTimeout(() => resolve(null), 1500);
      });
    }

    it('refuses the upload beyond the share on another gateway, and frees the share when an upload ends', async () => {
      expect(await startChunk(urls[0]!)).toBeNull();
      expect(await startChunk(urls[1]!)).toBeNull();
      // Both gateways know the participant has SHARE uploads running.
      expect(await startChunk(urls[0]!)).toBe(429);
      expect(await startChunk(urls[1]!)).toBe(429);
      // One upload ends (its client goes away): one slot is free again, on either gateway.
      held.shift()!.destroy();
      await expect.poll(() => startChunk(urls[1]!), { timeout: 10_000, interval: 200 }).toBeNull();
    });

    it('answers 503 with words, and passes nothing on, while the shared count cannot be read', async () => {
      // A Redis that is not there (a port nobody listens on): every command fails at once.
      const deadRedis = await unreachableRedis();
      const url = await startGateway(deadRedis);
      const answer = await fetch(`${url}/api/evidence/uploads/${randomUUID()}`, {
        method: 'PATCH',
        headers: { cookie, 'content-type': 'application/offset+octet-stream', 'tus-resumable': '1.0.0', 'upload-offset': '0' },
        body: 'x',
      });
      expect(answer.status).toBe(503);
      expect(await answer.json()).toEqual({ code: 'internal', message: 'Uploads are not available right now. Please try again shortly.' });
      // Something that is no upload does not need the count.
      expect((await fetch(`${url}/api/user`, { headers: { cookie } })).status).toBe(200);
      deadRedis.disconnect();
    });
  },
);

afterAll(async () => {
  redis?.disconnect();
  await stopContainers();
});
