import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { pino } from 'pino';
import { Kafka } from 'kafkajs';
import { KafkaEventBus, createKafkaTopics, kafkaConnectionFromEnv, type KafkaConnectionSettings } from '@portal/platform';
import type { EventEnvelope } from '@portal/contracts';
import { waitFor } from '@portal/platform/testing';
import { startPrivateServers, type PrivateServers } from '../support/private-servers.js';

// Managed Kafka wants TLS and SASL: a broker of this test's own (infra/local/servers.sh,
// KAFKA_SECURITY=sasl_ssl: a self-signed certificate, SASL PLAIN and SCRAM users) and the portal's
// client settings from the environment, as a service reads them.
const silent = pino({ level: 'silent' });
let servers: PrivateServers;
let brokers: string[];

beforeAll(async () => {
  servers = await startPrivateServers(['kafka'], {
    KAFKA_SECURITY: 'sasl_ssl',
    KAFKA_SASL_USERNAME: 'festival',
    KAFKA_SASL_PASSWORD: 'festival-secret-0123456789',
  });
  brokers = servers.env.KAFKA_BROKERS!.split(',');
}, 240_000);
afterAll(async () => servers?.stop());

const connection = (overrides: Record<string, string> = {}): KafkaConnectionSettings =>
  kafkaConnectionFromEnv({ ...servers.env, ...overrides });
const event = (n: number): EventEnvelope => ({
  id: `e${n}`,
  type: 'test.happened',
  version: 1,
  occurredAt: new Date().toISOString(),
  key: 'k',
  data: { n },
});

describe('Kafka over TLS with SASL', () => {
  it('reads TLS and SASL from the environment, and names what is missing', () => {
    const settings = connection();
    expect(settings.sasl).toMatchObject({ mechanism: 'plain', username: 'festival' });
    expect(settings.ssl).toMatchObject({ rejectUnauthorized: true, ca: [expect.stringContaining('BEGIN CERTIFICATE')] });
    expect(kafkaConnectionFromEnv({})).toEqual({});
    expect(() => kafkaConnectionFromEnv({ KAFKA_SASL_MECHANISM: 'scram-sha-256' })).toThrow(/KAFKA_SASL_USERNAME/);
    expect(() => kafkaConnectionFromEnv({ KAFKA_SASL_MECHANISM: 'gssapi', KAFKA_SASL_USERNAME: 'a', KAFKA_SASL_PASSWORD: 'b' })).toThrow(
      /KAFKA_SASL_MECHANISM/,
    );
  });

  it('creates the topics once, with their partitions, replication factor and retention, then publishes and consumes', async () => {
    const namespace = `t${randomBytes(4).toString('hex')}`;
    const settings = {
      brokers,
      namespace,
      partitions: 2,
      replicationFactor: 1,
      retentionMs: 7_200_000,
      deadLetterRetentionMs: 3_600_000,
      ...connection(),
    };
    const first = await createKafkaTopics(settings);
    expect(first.created).toContain(`${namespace}.identity.users`);
    expect(first.created).toContain(`${namespace}.identity.users.dead-letter`);
    expect(first.existing).toEqual([]);

    const admin = new Kafka({ brokers, ...connection(), logLevel: 0 }).admin();
    await admin.connect();
    const config = async (topic: string) =>
      Object.fromEntries(
        (
          await admin.describeConfigs({ includeSynonyms: false, resources: [{ type: 2, name: `${namespace}.${topic}` }] })
        ).resources[0]!.configEntries.map((entry) => [entry.configName, entry.configValue]),
      );
    try {
      const metadata = await admin.fetchTopicMetadata({ topics: [`${namespace}.evidence.items`] });
      expect(metadata.topics[0]!.partitions).toHaveLength(2);
      expect((await config('evidence.items'))['retention.ms']).toBe('7200000');
      expect((await config('evidence.items.dead-letter'))['retention.ms']).toBe('3600000');
      // A setting an operator gave one dead-letter topic by hand survives the raise below.
      await admin.alterConfigs({
        validateOnly: false,
        resources: [
          {
            type: 2,
            name: `${namespace}.audit.entries.dead-letter`,
            configEntries: [
              { name: 'retention.ms', value: '3600000' },
              { name: 'max.message.bytes', value: '2000000' },
            ],
          },
        ],
      });

      // Run again with the dead letters' retention raised (14 days): only the dead-letter topics change.
      const again = await createKafkaTopics({ ...settings, deadLetterRetentionMs: 1_209_600_000 });
      expect(again.created).toEqual([]);
      expect(again.existing.sort()).toEqual(first.created.sort());
      expect(again.raised.sort()).toEqual(first.created.filter((topic) => topic.endsWith('.dead-letter')).sort());
      expect((await config('evidence.items.dead-letter'))['retention.ms']).toBe('1209600000');
      expect((await config('evidence.items'))['retention.ms']).toBe('7200000');
      expect(await config('audit.entries.dead-letter')).toMatchObject({ 'retention.ms': '1209600000', 'max.message.bytes': '2000000' });
      expect((await createKafkaTopics({ ...settings, deadLetterRetentionMs: 1_209_600_000 })).raised).toEqual([]);
    } finally {
      await admin.disconnect();
    }

    const bus = new KafkaEventBus({ brokers, clientId: 'security-test', logger: silent, namespace, ...connection() });
    try {
      const received: number[] = [];
      const subscription = await bus.subscribe({
        groupId: 'g',
        topics: ['evidence.items'],
        handler: async (message) => void received.push((message.value.data as { n: number }).n),
      });
      await bus.publish('evidence.items', [
        { key: 'k', value: event(1) },
        { key: 'k', value: event(2) },
      ]);
      await waitFor(() => received.length === 2, { timeoutMs: 30_000, what: 'both events' });
      expect(received).toEqual([1, 2]);
      await subscription.close();
    } finally {
      await bus.close();
    }
  });

  it('passes the replication factor on: 3 on a one-broker cluster is refused', async () => {
    await expect(
      createKafkaTopics(
        {
          brokers,
          namespace: `t${randomBytes(4).toString('hex')}`,
          partitions: 1,
          replicationFactor: 3,
          retentionMs: 3_600_000,
          deadLetterRetentionMs: 3_600_000,
          ...connection(),
        },
        ['x'],
      ),
    ).rejects.toThrow(/Kafka refused to create topics: Replication-factor is invalid/);
  });

  it('authenticates with SCRAM-SHA-256 and SCRAM-SHA-512 too', async () => {
    for (const mechanism of ['scram-sha-256', 'scram-sha-512']) {
      const bus = new KafkaEventBus({
        brokers,
        clientId: 'security-test',
        logger: silent,
        ...connection({ KAFKA_SASL_MECHANISM: mechanism }),
      });
      try {
        await expect(bus.ping()).resolves.toBeUndefined();
      } finally {
        await bus.close();
      }
    }
  });

  it('is refused with a wrong password', async () => {
    const bus = new KafkaEventBus({
      brokers,
      clientId: 'security-test',
      logger: silent,
      ...connection({ KAFKA_SASL_PASSWORD: 'not-the-password' }),
    });
    try {
      await expect(bus.ping()).rejects.toThrow(/SASL|[Aa]uthentication/);
    } finally {
      await bus.close();
    }
  });
});
