import { fileURLToPath } from 'node:url';
import { pino } from 'pino';
import { Kafka, logLevel } from 'kafkajs';
import { afterAll, describe, it } from 'vitest';
import { CreateBucketCommand } from '@aws-sdk/client-s3';
import { BullMqJobQueue, KafkaEventBus, S3BlobStore, SmtpMailer } from '@portal/platform';
import { blobStoreContract, eventBusContract, jobQueueContract, mailerContract, runTypeScript } from '@portal/platform/testing';
import { caughtMail, describeSources, infraServers, stopContainers } from '../support/infra-servers.js';

const servers = await infraServers();
afterAll(() => stopContainers());
const silent = pino({ level: 'silent' });

describe('infrastructure servers', () => {
  it(`are: ${describeSources(servers)}`, () => undefined);
});

if (servers.kafkaBrokers) {
  const brokers = servers.kafkaBrokers;
  eventBusContract('Kafka (kafkajs)', {
    connect: async () => new KafkaEventBus({ brokers, clientId: 'contract-test', logger: silent, createTopics: true }),
    timeoutMs: 45_000,
    // Bytes as some other producer might write them: kafkajs's own producer, beside the bus.
    writeRaw: async (_bus, topic, key, value) => {
      const producer = new Kafka({ brokers, clientId: 'contract-test-raw', logLevel: logLevel.NOTHING }).producer();
      await producer.connect();
      try {
        await producer.send({ topic, messages: [{ key, value }] });
      } finally {
        await producer.disconnect();
      }
    },
  });
} else {
  describe.skip('EventBus contract: Kafka — no broker (KAFKA_BROKERS unset and no Docker)', () => it('skipped', () => undefined));
}

if (servers.redisUrl) {
  const redisUrl = servers.redisUrl;
  jobQueueContract('BullMQ (Redis)', {
    connect: async (queue) => new BullMqJobQueue<{ n: number }>({ queue, redisUrl, logger: silent, prefix: 'contract' }),
    timeoutMs: 20_000,
    startDoomedWorker: async (queue) => {
      const worker = runTypeScript(fileURLToPath(new URL('./fixtures/doomed-bullmq-worker.ts', import.meta.url)), [redisUrl, queue]);
      await worker.waitForLine(/^ready$/);
      return { started: worker.waitForLine(/^started /).then(() => undefined), kill: () => worker.kill() };
    },
  });
} else {
  describe.skip('JobQueue contract: BullMQ — no Redis (REDIS_URL unset and no Docker)', () => it('skipped', () => undefined));
}

if (servers.s3) {
  const s3 = servers.s3;
  blobStoreContract('S3 (@aws-sdk/client-s3)', {
    create: async () => {
      const store = new S3BlobStore({ ...s3, forcePathStyle: true });
      await store.client.send(new CreateBucketCommand({ Bucket: s3.bucket })).catch(() => undefined);
      return store;
    },
  });
} else {
  describe.skip('BlobStore contract: S3 — no server (S3_ENDPOINT/S3_BUCKET unset and no Docker)', () => it('skipped', () => undefined));
}

if (servers.smtpUrl && servers.mailApi) {
  const api = servers.mailApi;
  mailerContract(`SMTP to ${api.kind}`, {
    from: 'Portal <no-reply@portal.test>',
    create: async () => new SmtpMailer(servers.smtpUrl!, 'Portal <no-reply@portal.test>'),
    delivered: () => caughtMail(api),
  });
} else {
  describe.skip('Mailer contract: SMTP — no mail catcher (SMTP_URL with MAIL_API or MAILPIT_API unset, and no Docker)', () =>
    it('skipped', () => undefined));
}
