import { randomUUID } from 'node:crypto';
import { Kafka, logLevel } from 'kafkajs';
import { pino } from 'pino';
import { afterAll, describe, expect, it } from 'vitest';
import { KafkaEventBus, createEvent, type BusMessage } from '@portal/platform';
import { waitFor } from '@portal/platform/testing';
import { infraServers, stopContainers } from '../support/infra-servers.js';

// Each gateway replica subscribes on its own (every replica must evict its own caches) under a
// group named after the pod. Pods come and go with the autoscaler: a group left behind by each
// would pile up on the brokers. A broadcast subscription commits no offsets and removes its group
// when it closes; a shared group (any other subscription) stays, as its work must resume.

const servers = await infraServers();
afterAll(() => stopContainers());
const silent = pino({ level: 'silent' });

describe.skipIf(!servers.kafkaBrokers)('Kafka: broadcast subscriptions leave no consumer group behind', () => {
  it('removes a broadcast group when it closes, and keeps a shared one', async () => {
    const brokers = servers.kafkaBrokers!;
    const namespace = `broadcast-${randomUUID().slice(0, 8)}`;
    const bus = new KafkaEventBus({ brokers, clientId: 'broadcast-test', logger: silent, namespace, createTopics: true });
    const admin = new Kafka({ clientId: 'broadcast-test-admin', brokers, logLevel: logLevel.NOTHING }).admin();
    await admin.connect();
    try {
      const groups = async () =>
        (await admin.listGroups()).groups.map((group) => group.groupId).filter((id) => id.startsWith(`${namespace}.`));
      const received: Record<string, BusMessage[]> = { a: [], b: [], shared: [] };
      const subscribe = (name: string, broadcast: boolean) =>
        bus.subscribe({
          groupId: `gateway.${name}`,
          topics: ['sessions'],
          fromBeginning: false,
          broadcast,
          handler: async (message) => void received[name]!.push(message),
        });
      const a = await subscribe('a', true);
      const b = await subscribe('b', true);
      const shared = await subscribe('shared', false);
      await waitFor(async () => ((await groups()).length === 3 ? true : null), {
        timeoutMs: 30_000,
        intervalMs: 500,
        what: 'three groups',
      });
      // Every broadcast subscriber sees every message.
      await waitFor(
        async () => {
          await bus.publish('sessions', [{ key: 'k', value: createEvent({ type: 'test.happened', key: 'k', data: {} }) }]);
          return received.a!.length > 0 && received.b!.length > 0 && received.shared!.length > 0 ? true : null;
        },
        { timeoutMs: 45_000, intervalMs: 1000, what: 'a message seen by every subscriber' },
      );
      await a.close();
      await b.close();
      await shared.close();
      expect((await groups()).sort()).toEqual([`${namespace}.gateway.shared`]);
    } finally {
      await admin.disconnect();
      await bus.close();
    }
  }, 120_000);
});
