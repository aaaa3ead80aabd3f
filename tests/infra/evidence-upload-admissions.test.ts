import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import { afterAll, describe, expect, it } from 'vitest';
import { UnfinishedUploadQuota } from '../../services/evidence/src/domain/unfinished-upload-quota.js';
import {
  AdmissionTurnUnavailable,
  MemoryAdmissionLedger,
  RedisAdmissionLedger,
  type AdmissionLedger,
} from '../../services/evidence/src/repositories/upload-admissions.js';
import { fileUploadStorage } from '../../services/evidence/src/repositories/upload-storage.js';
import { admissionLedgerContract } from '../../services/evidence/test/contracts/admission-ledger-contract.js';
import { infraServers, stopContainers, unreachableRedis } from '../support/infra-servers.js';

// One participant's share of unfinished resumable uploads across evidence replicas: the check and
// the admission it allows meet in Redis, so creations that a load balancer spreads over two
// replicas at the same instant still admit one share between them.

const servers = await infraServers();
const redis = servers.redisUrl ? new Redis(servers.redisUrl, { lazyConnect: false }) : null;
const prefix = `contract-admissions-${randomUUID().slice(0, 8)}:`;
const MiB = 1024 * 1024;

if (redis) admissionLedgerContract('Redis', async () => new RedisAdmissionLedger(redis, { prefix }), { shared: true });

describe.skipIf(!redis)(
  redis
    ? 'the unfinished-uploads share across evidence replicas'
    : 'the unfinished-uploads share across evidence replicas (skipped: no Redis)',
  () => {
    // The replicas' one upload store (files here; S3 in production: the quota reads it alike).
    const folder = mkdtempSync(join(tmpdir(), 'admissions-'));
    const storage = fileUploadStorage(folder, 24 * 3600_000);

    /** Two replicas' quotas (3 MiB each participant) over the one upload store, each with its ledger. */
    function replicas(ledgers: [AdmissionLedger, AdmissionLedger]): UnfinishedUploadQuota[] {
      return ledgers.map((ledger) => new UnfinishedUploadQuota(storage, 3 * MiB, 8 * MiB, ledger));
    }

    /** Twelve creations of 1 MiB at the same instant, every other one at the other replica: how many were admitted. */
    async function burst(quotas: UnfinishedUploadQuota[]): Promise<number> {
      const owner = randomUUID();
      const answers = await Promise.all(Array.from({ length: 12 }, (_, i) => quotas[i % 2]!.admit(owner, `${owner}.${i}`, MiB)));
      return answers.filter((answer) => answer.admitted).length;
    }

    afterAll(() => rmSync(folder, { recursive: true, force: true }));

    it('admits one share between two replicas (each alone admitted a share of its own)', async () => {
      expect(await burst(replicas([new MemoryAdmissionLedger(), new MemoryAdmissionLedger()]))).toBe(6);
      expect(await burst(replicas([new RedisAdmissionLedger(redis!, { prefix }), new RedisAdmissionLedger(redis!, { prefix })]))).toBe(3);
    });

    it('frees a turn whose replica died mid-step once its lease is up, and gives up on a turn that never comes', async () => {
      const owner = randomUUID();
      // A replica that took the turn and died: its key stays until the lease lapses.
      await redis!.set(`${prefix}turn:${owner}`, 'a-replica-that-died', 'PX', 300);
      const ledger = new RedisAdmissionLedger(redis!, { prefix, waitMs: 5_000 });
      expect(await ledger.exclusive(owner, async () => 'ran')).toBe('ran');
      await redis!.set(`${prefix}turn:${owner}`, 'a-replica-that-died', 'PX', 60_000);
      const impatient = new RedisAdmissionLedger(redis!, { prefix, waitMs: 200 });
      await expect(impatient.exclusive(owner, async () => 'ran')).rejects.toBeInstanceOf(AdmissionTurnUnavailable);
      await redis!.del(`${prefix}turn:${owner}`);
    });

    it('gives no turn while Redis does not answer: the caller refuses the upload (503) rather than skip the check', async () => {
      const away = await unreachableRedis();
      const [quota] = replicas([new RedisAdmissionLedger(away, { prefix }), new MemoryAdmissionLedger()]);
      await expect(quota!.admit(randomUUID(), 'x.1', MiB)).rejects.toBeInstanceOf(AdmissionTurnUnavailable);
      away.disconnect();
    });
  },
);

afterAll(async () => {
  redis?.disconnect();
  await stopContainers();
});
