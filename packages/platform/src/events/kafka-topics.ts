// Before any kafkajs client is made: its idle timer loop, fixed (see the module).
import './kafkajs-idle-loop-fix.js';
import { Kafka, logLevel, type Admin } from 'kafkajs';
import { TOPICS } from '@portal/contracts';
import type { Logger } from 'pino';
import { DEFAULT_DEAD_LETTER_RETENTION_MS, deadLetterTopic } from './event-bus.js';
import { waitForTopicLeaders } from './kafka-topic-leaders.js';
import type { KafkaConnectionSettings, KafkaTopicSettings } from './kafka-settings.js';

/** Every topic the portal uses: one per aggregate, and the dead-letter topic of each. */
export function portalTopics(): string[] {
  return Object.values(TOPICS).flatMap((topic) => [topic, deadLetterTopic(topic)]);
}

export interface CreateTopicsOptions extends KafkaConnectionSettings, Omit<KafkaTopicSettings, 'deadLetterRetentionMs'> {
  /** retention.ms of the dead-letter topics (default 14 days, as DEAD_LETTER_RETENTION_MS). */
  deadLetterRetentionMs?: number;
  brokers: string[];
  /** The deployment namespace prefixed to each topic (as the event bus does). */
  namespace?: string;
  logger?: Logger;
}

/**
 * Creates the topics that do not exist yet, with their partitions, replication factor and
 * retention (a dead-letter topic: deadLetterRetentionMs); leaves the existing ones as they are,
 * but for a dead-letter topic that keeps its messages less long than deadLetterRetentionMs, whose
 * retention is raised to it. Answers which were created, which existed, and which were raised.
 * Run once per deployment (the kafka-topics Job, a test's set-up): the services never create topics.
 */
export async function createKafkaTopics(
  options: CreateTopicsOptions,
  topics: string[] = portalTopics(),
): Promise<{ created: string[]; existing: string[]; raised: string[] }> {
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
            configEntries: [{ name: 'retention.ms', value: String(retentionOf(topic, options)) }],
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
    const existing = qualified.filter((topic) => present.has(topic));
    const raised = await raiseDeadLetterRetention(
      admin,
      existing.filter((topic) => topic.endsWith(DEAD_LETTER_SUFFIX)),
      options.deadLetterRetentionMs ?? DEFAULT_DEAD_LETTER_RETENTION_MS,
    );
    return { created: missing, existing, raised };
  } finally {
    await admin.disconnect();
  }
}

const DEAD_LETTER_SUFFIX = deadLetterTopic('');
/** kafkajs's ConfigResourceTypes.TOPIC (a CommonJS export Node's ES module loader does not see by name). */
const TOPIC_RESOURCE = 2;

function retentionOf(topic: string, options: CreateTopicsOptions): number {
  return topic.endsWith(DEAD_LETTER_SUFFIX) ? (options.deadLetterRetentionMs ?? DEFAULT_DEAD_LETTER_RETENTION_MS) : options.retentionMs;
}

/**
 * Dead-letter topics made before their retention was a setting of its own (3 days, like every
 * topic) keep their dead letters at least deadLetterRetentionMs from now on. Kafka's AlterConfigs
 * (the one kafkajs speaks) replaces a topic's whole set of settings, so those set on the topic
 * itself (min.insync.replicas, say) are sent again with the new retention.
 */
async function raiseDeadLetterRetention(admin: Admin, topics: string[], retentionMs: number): Promise<string[]> {
  if (topics.length === 0) return [];
  const described = await admin.describeConfigs({
    includeSynonyms: false,
    resources: topics.map((name) => ({ type: TOPIC_RESOURCE, name })),
  });
  const raised: string[] = [];
  for (const resource of described.resources) {
    const retention = resource.configEntries.find((entry) => entry.configName === 'retention.ms');
    const current = Number(retention?.configValue ?? NaN);
    // -1 keeps messages for ever: nothing to raise.
    if (current === -1 || current >= retentionMs) continue;
    // configSource 1: DYNAMIC_TOPIC_CONFIG, a setting of this topic's own.
    const own = resource.configEntries
      .filter((entry) => entry.configSource === 1 && !entry.isSensitive && entry.configName !== 'retention.ms')
      .map((entry) => ({ name: entry.configName, value: entry.configValue }));
    await admin.alterConfigs({
      validateOnly: false,
      resources: [
        {
          type: TOPIC_RESOURCE,
          name: resource.resourceName,
          configEntries: [...own, { name: 'retention.ms', value: String(retentionMs) }],
        },
      ],
    });
    raised.push(resource.resourceName);
  }
  return raised;
}
