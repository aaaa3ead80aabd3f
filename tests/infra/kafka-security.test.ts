import { randomBytes } from 'node:crypto';
import { execFile } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
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

      await waitFor(async () => (await config('audit.entries.dead-letter'))['max.message.bytes'] === '2000000', {
        timeoutMs: 10_000,
        what: 'the setting given by hand',
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

  // The procedure of docs/OPERATIONS.md ("Rotating the Kafka credentials"): new credentials beside
  // the old (a second SCRAM user), every pod rolled onto them while old and new pods share their
  // consumer groups, then the old credentials removed. Nothing handled is lost on the way.
  it('rotates the SASL credentials without an outage: a second user beside the first, the pods moved, the first removed', async () => {
    // Kafka's own ConfigCommand, from the jars the broker runs (its class path), over TLS and SASL.
    const classPath = readFileSync(`/proc/${servers.pid('kafka')}/cmdline`, 'utf8')
      .split('\0')
      .find((arg) => arg.endsWith('/*'))!;
    const clientConfig = join(servers.env.KAFKA_SSL_CA_FILE!, '..', 'admin.properties');
    writeFileSync(
      clientConfig,
      [
        'security.protocol=SASL_SSL',
        'sasl.mechanism=SCRAM-SHA-512',
        `sasl.jaas.config=org.apache.kafka.common.security.scram.ScramLoginModule required username="${servers.env.KAFKA_SASL_USERNAME}" password="${servers.env.KAFKA_SASL_PASSWORD}";`,
        'ssl.truststore.type=PEM',
        `ssl.truststore.location=${servers.env.KAFKA_SSL_CA_FILE}`,
      ].join('\n'),
    );
    const users = (...args: string[]) =>
      promisify(execFile)(
        'java',
        [
          '-Xmx128m',
          '-cp',
          classPath,
          'kafka.admin.ConfigCommand',
          '--bootstrap-server',
          brokers[0]!,
          '--command-config',
          clientConfig,
          '--entity-type',
          'users',
          ...args,
        ],
        {
          timeout: 60_000,
        },
      );
    const OLD = { KAFKA_SASL_MECHANISM: 'scram-sha-512' };
    const NEW = {
      KAFKA_SASL_MECHANISM: 'scram-sha-512',
      KAFKA_SASL_USERNAME: 'festival-next',
      KAFKA_SASL_PASSWORD: 'festival-next-secret-9876543210',
    };
    const namespace = `r${randomBytes(4).toString('hex')}`;
    await createKafkaTopics({ brokers, namespace, partitions: 2, replicationFactor: 1, retentionMs: 3_600_000, ...connection(OLD) }, [
      'evidence.items',
    ]);
    const received: number[] = [];
    const pod = async (credentials: Record<string, string>) => {
      const bus = new KafkaEventBus({ brokers, clientId: 'rotation', logger: silent, namespace, ...connection(credentials) });
      const subscription = await bus.subscribe({
        groupId: 'evidence',
        topics: ['evidence.items'],
        handler: async (message) => void received.push((message.value.data as { n: number }).n),
      });
      return { bus, close: async () => (await subscription.close(), await bus.close()) };
    };

    const oldPod = await pod(OLD);
    await oldPod.bus.publish('evidence.items', [{ key: 'a', value: event(1) }]);
    await waitFor(() => received.includes(1), { timeoutMs: 30_000, what: 'the first event' });
    // 1. The new user beside the old one (Strimzi: a second KafkaUser; a managed Kafka: a second credential).
    await users(
      '--alter',
      '--add-config',
      `SCRAM-SHA-512=[iterations=8192,password=${NEW.KAFKA_SASL_PASSWORD}]`,
      '--entity-name',
      NEW.KAFKA_SASL_USERNAME,
    );
    // 2. The Secret portal-kafka changes and the pods roll: old and new share the consumer group.
    const newPod = await waitFor(() => pod(NEW).catch(() => null), { timeoutMs: 30_000, what: 'the new credentials to be accepted' });
    await newPod.bus.publish('evidence.items', [
      { key: 'b', value: event(2) },
      { key: 'c', value: event(3) },
    ]);
    await oldPod.bus.publish('evidence.items', [{ key: 'd', value: event(4) }]);
    await waitFor(() => [2, 3, 4].every((n) => received.includes(n)), { timeoutMs: 60_000, what: 'the events of both pods' });
    await oldPod.close();
    // 3. The old credentials go: a client still using them is refused, the rolled pods go on.
    await users('--alter', '--delete-config', 'SCRAM-SHA-512', '--entity-name', servers.env.KAFKA_SASL_USERNAME!);
    const stale = new KafkaEventBus({ brokers, clientId: 'rotation-stale', logger: silent, ...connection(OLD) });
    try {
      await waitFor(
        () =>
          stale.ping().then(
            () => false,
            () => true,
          ),
        { timeoutMs: 30_000, what: 'the old credentials to be refused' },
      );
    } finally {
      await stale.close();
    }
    await newPod.bus.publish('evidence.items', [{ key: 'e', value: event(5) }]);
    await waitFor(() => received.includes(5), { timeoutMs: 60_000, what: 'an event after the rotation' });
    await newPod.close();
    expect([...new Set(received)].sort()).toEqual([1, 2, 3, 4, 5]);
  }, 240_000);
});
