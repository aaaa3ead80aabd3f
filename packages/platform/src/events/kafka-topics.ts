// Before any kafkajs client is made: its idle timer loop, fixed (see the module).
import './kafkajs-idle-loop-fix.js';
import { Kafka, logLevel } from 'kafkajs';
import { TOPICS } from '@portal/contracts';
import type { Logger } from 'pino';
import { deadLetterTopic } from './event-bus.js';
import { waitForTopicLeaders } from './kafka-topic-leaders.js';
import type { KafkaConnectionSettings, KafkaTopicSettings } from './kafka-settings.js';

/** Every topic the portal uses: one per aggregate, and the dead-letter topic of each. */
export function portalTopics(): string[] {
  return Object.values(TOPICS).flatMap((topic) => [topic, deadLetterTopic(topic)]);
}

export interface CreateTopicsOptions extends KafkaConnectionSettings, KafkaTopicSettings {
  brokers: string[];
  /** The deployment namespace prefixed to each topic (as the event bus does). */
  namespace?: string;
  logger?: Logger;
}

/**
 * Creates the topics that do not exist yet, with their partitions, replication factor and
 * retention; leaves the existing ones as they are. Answers which were created and which existed.
 * Run once per deployment (the kafka-topics Job, a test's set-up): the services never create topics.
 */
export async function createKafkaTopics(
  options: CreateTopicsOptions,
  topics: string[] = portalTopics(),
): Promise<{ created: string[]; existing: string[] }> {
  const kafka = new Kafka({
    clientId: 'portal-topics',
    brokers: options.brokers,
    ...(options.ssl ? { ssl: options.ssl } : {}),
    ...(options.sasl ? { sasl: options.sasl } : {}),
    retry: { retries: 8, initialRetryTime: 300, maxRetryTime: 5_000 },
    logLevel: logLevel.WARN,
    logCreator:
      () =>
      ({ log: entry }) => {
        const { message, ...rest } = entry;
        options.logger?.warn(rest, `kafka: ${message}`);
      },
  });
  const admin = kafka.admin();
  await admin.connect();
  try {
    const qualified = topics.map((topic) => (options.namespace ? `${options.namespace}.${topic}` : topic));
    const present = new Set(await admin.listTopics());
    const missing = qualified.filter((topic) => !present.has(topic));
    if (missing.length > 0) {
      await admin
        .createTopics({
          // Waited for below: kafkajs's own wait gives up on a broker that does not know the topic yet.
          waitForLeaders: false,
          topics: missing.map((topic) => ({
            topic,
            numPartitions: options.partitions,
            replicationFactor: options.replicationFactor,
            configEntries: [{ name: 'retention.ms', value: String(options.retentionMs) }],
          })),
        })
        .catch((error: unknown) => {
          // kafkajs says only "Topic creation errors"; the broker's reason per topic is inside.
          const inner = (error as { errors?: { message?: string; topic?: string }[] }).errors ?? [];
          if (inner.length === 0) throw error;
          throw new Error(`Kafka refused to create topics: ${[...new Set(inner.map((e) => e.message))].join('; ')}`, { cause: error });
        });
      await waitForTopicLeaders(admin, missing);
    }
    return { created: missing, existing: qualified.filter((topic) => present.has(topic)) };
  } finally {
    await admin.disconnect();
  }
}
