import { randomUUID } from 'node:crypto';
import { pino } from 'pino';
import { afterAll, describe, expect, it } from 'vitest';
import { TOPICS } from '@portal/contracts';
import { KafkaEventBus, PoisonMessageError, createEvent, createKafkaTopics, runDeadLetterCommand, type DeadLetter } from '@portal/platform';
import { waitFor } from '@portal/platform/testing';
import { infraServers, stopContainers } from '../support/infra-servers.js';

// Dead letters on Kafka: a poison message goes to <namespace>.<topic>.dead-letter with why and for
// which group; `npm run admin -- dead-letters` lists them and replays them to their topic for that
// group alone, once (a second replay is skipped), against the real broker.

const servers = await infraServers();
afterAll(() => stopContainers());
const silent = pino({ level: 'silent' });

describe.skipIf(!servers.kafkaBrokers)('Kafka: dead letters seen and replayed', () => {
  it('lists a poison message of one group, and replays it to that group alone once the handler is mended', async () => {
    const brokers = servers.kafkaBrokers!;
    const namespace = `dl${randomUUID().slice(0, 8)}`;
    await createKafkaTopics({
      brokers,
      namespace,
      partitions: 2,
      replicationFactor: 1,
      retentionMs: 3_600_000,
      deadLetterRetentionMs: 3_600_000,
    });
    const bus = new KafkaEventBus({ brokers, clientId: 'dead-letters-test', logger: silent, namespace });
    const env = { KAFKA_BROKERS: brokers.join(','), DEPLOYMENT_NAMESPACE: namespace };
    const command = async (args: string[]) => {
      const lines: string[] = [];
      const code = await runDeadLetterCommand(args, env, (line) => lines.push(line));
      return { code, lines };
    };
    let mended = false;
    const handled: string[] = [];
    const others: string[] = [];
    const event = (n: number) => createEvent({ type: 'user.updated', key: 'u1', data: { n } });
    const first = event(1);
    try {
      const evidence = await bus.subscribe({
        groupId: 'evidence',
        topics: [TOPICS.users],
        handler: async (message) => {
          if (message.value.id === first.id && !mended) throw new PoisonMessageError('user.updated without a username');
          handled.push(message.value.id);
        },
      });
      const notifier = await bus.subscribe({
        groupId: 'notifier',
        topics: [TOPICS.users],
        handler: async (message) => void others.push(message.value.id),
      });
      const second = event(2);
      await bus.publish(TOPICS.users, [
        { key: 'u1', value: first },
        { key: 'u1', value: second },
      ]);
      await waitFor(() => handled.includes(second.id) && others.length === 2, {
        timeoutMs: 60_000,
        what: 'both groups past the poison message',
      });

      const listed = await command(['list', '--topic', TOPICS.users, '--json']);
      expect(listed.code, listed.lines.join('\n')).toBe(0);
      const letters = listed.lines.map((line) => JSON.parse(line) as DeadLetter);
      expect(letters).toEqual([
        expect.objectContaining({
          topic: TOPICS.users,
          group: 'evidence',
          kind: 'poison',
          key: 'u1',
          replayedAt: null,
          error: 'user.updated without a username',
        }),
      ]);
      expect(JSON.parse(letters[0]!.value)).toMatchObject({ id: first.id, type: 'user.updated' });

      // The handler is mended (a release); the dead letter goes back to evidence, and only there.
      mended = true;
      const replayed = await command(['replay', '--topic', TOPICS.users, '--since', '1h']);
      expect(replayed.lines.at(-1)).toBe('1 replayed, 0 already replayed');
      await waitFor(() => handled.includes(first.id), { timeoutMs: 60_000, what: 'the replayed event at evidence' });
      await new Promise((resolve) => setTimeout(resolve, 2000));
      expect(others).toHaveLength(2);
      expect(handled.filter((id) => id === first.id)).toHaveLength(1);

      expect((await command(['replay', '--topic', TOPICS.users, '--since', '1h'])).lines.at(-1)).toBe('0 replayed, 1 already replayed');
      expect((await command(['list', '--topic', TOPICS.users])).lines[0]).toMatch(/group=evidence .*replayed=\d{4}-/);
      await evidence.close();
      await notifier.close();
    } finally {
      await bus.close();
    }
  }, 180_000);
});
