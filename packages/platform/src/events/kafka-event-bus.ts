import { setTimeout as delay } from 'node:timers/promises';
// Before any kafkajs client is made: its idle timer loop, fixed (see the module).
import './kafkajs-idle-loop-fix.js';
import { Kafka, logLevel, type Admin, type Consumer, type Producer, type IHeaders } from 'kafkajs';
import type { EventEnvelope } from '@portal/contracts';
import type { Logger } from 'pino';
import { continueWork } from '../context/continue-work.js';
import type { KafkaConnectionSettings } from './kafka-settings.js';
import { waitForTopicLeaders } from './kafka-topic-leaders.js';
import {
  deadLetterTopic,
  type BusMessage,
  type EventBus,
  type OutgoingMessage,
  type SubscribeOptions,
  type Subscription,
} from './event-bus.js';

export interface KafkaEventBusOptions extends KafkaConnectionSettings {
  brokers: string[];
  clientId: string;
  logger: Logger;
  /**
   * Create a topic the first time it is used, when it does not exist. Off for the services: a
   * deployment creates its topics once (createKafkaTopics: the kafka-topics Job), with their
   * partitions, replication factor and retention. On for tests that invent topic names.
   */
  createTopics?: boolean;
  /** Partitions of topics this bus creates (messages with the same key share a partition). */
  partitions?: number;
  replicationFactor?: number;
  /**
   * Prefixed to every topic and consumer group name, so that several deployments (or test runs)
   * can share one Kafka cluster. Callers keep using the plain names.
   */
  namespace?: string;
}

function headersToStrings(headers: IHeaders | undefined): Record<string, string> {
  const result: Record<string, string> = {};
  for (const [name, value] of Object.entries(headers ?? {})) {
    if (value === undefined) continue;
    result[name] = Array.isArray(value) ? value.map(String).join(',') : value.toString();
  }
  return result;
}

/**
 * The event bus on Kafka (kafkajs): topics keyed by aggregate id (one aggregate's events share a
 * partition, so they stay in order), consumer groups, offsets committed only after the handler
 * finished (at least once), retries with backoff and a `<topic>.dead-letter` topic.
 */
export class KafkaEventBus implements EventBus {
  private readonly kafka: Kafka;
  private readonly producer: Producer;
  private readonly admin: Admin;
  private readonly consumers = new Set<Consumer>();
  private readonly knownTopics = new Set<string>();
  private connected: Promise<void> | undefined;

  constructor(private readonly options: KafkaEventBusOptions) {
    const log = options.logger;
    this.kafka = new Kafka({
      clientId: options.clientId,
      brokers: options.brokers,
      ...(options.ssl ? { ssl: options.ssl } : {}),
      ...(options.sasl ? { sasl: options.sasl } : {}),
      retry: { retries: 10, initialRetryTime: 300, maxRetryTime: 10_000 },
      logLevel: logLevel.WARN,
      logCreator:
        () =>
        ({ level, log: entry }) => {
          const { message, ...rest } = entry;
          if (level <= logLevel.ERROR) log.error(rest, `kafka: ${message}`);
          else log.warn(rest, `kafka: ${message}`);
        },
    });
    // Idempotent producer with one request in flight: no duplicates from retries, order kept.
    this.producer = this.kafka.producer({ idempotent: true, maxInFlightRequests: 1, allowAutoTopicCreation: false });
    this.admin = this.kafka.admin();
  }

  private qualify(name: string): string {
    return this.options.namespace ? `${this.options.namespace}.${name}` : name;
  }

  private unqualify(name: string): string {
    const prefix = this.options.namespace ? `${this.options.namespace}.` : '';
    return prefix && name.startsWith(prefix) ? name.slice(prefix.length) : name;
  }

  async publish(topic: string, messages: OutgoingMessage[]): Promise<void> {
    if (messages.length === 0) return;
    await this.connect();
    await this.ensureTopics([topic]);
    await this.producer.send({
      topic: this.qualify(topic),
      acks: -1,
      messages: messages.map((message) => ({
        key: message.key,
        value: JSON.stringify(message.value),
        headers: { ...message.headers, ...(message.value.trace?.traceparent ? { traceparent: message.value.trace.traceparent } : {}) },
      })),
    });
  }

  async subscribe(options: SubscribeOptions): Promise<Subscription> {
    await this.connect();
    await this.ensureTopics(options.topics);
    const consumer = this.kafka.consumer({
      groupId: this.qualify(options.groupId),
      sessionTimeout: 30_000,
      heartbeatInterval: 3_000,
      allowAutoTopicCreation: false,
    });
    this.consumers.add(consumer);
    await consumer.connect();
    await consumer.subscribe({ topics: options.topics.map((topic) => this.qualify(topic)), fromBeginning: options.fromBeginning ?? true });
    let stopping = false;
    const maxAttempts = options.maxAttempts ?? 5;
    const baseDelay = options.retryDelayMs ?? 200;
    await consumer.run({
      // A broadcast subscriber keeps no offsets: Kafka removes a group that is empty and has none.
      autoCommit: options.broadcast !== true,
      eachMessage: async ({ topic: qualified, message, heartbeat }) => {
        const topic = this.unqualify(qualified);
        const busMessage: BusMessage = {
          topic,
          key: message.key?.toString() ?? '',
          value: JSON.parse(message.value?.toString() ?? 'null') as EventEnvelope,
          headers: headersToStrings(message.headers),
          offset: message.offset,
          timestamp: Number(message.timestamp),
        };
        for (let attempt = 1; ; attempt++) {
          try {
            await continueWork(
              {
                traceparent: busMessage.headers.traceparent ?? busMessage.value?.trace?.traceparent,
                requestId: busMessage.value?.trace?.requestId,
              },
              { handler: options.groupId, span: `${topic} process`, attributes: { 'messaging.consumer.group.name': options.groupId } },
              () => options.handler(busMessage),
            );
            return;
          } catch (error) {
            if (stopping) throw error; // not committed: redelivered after the restart
            if (attempt >= maxAttempts) {
              this.options.logger.error(
                { err: error, groupId: options.groupId, topic, offset: message.offset, eventId: busMessage.value?.id },
                'event handler failed for good; message sent to the dead-letter topic',
              );
              await this.publish(deadLetterTopic(topic), [
                {
                  key: busMessage.key,
                  value: busMessage.value,
                  headers: {
                    ...busMessage.headers,
                    'x-dead-letter-group': options.groupId,
                    'x-dead-letter-error': error instanceof Error ? error.message : String(error),
                    'x-dead-letter-offset': message.offset,
                  },
                },
              ]);
              return;
            }
            this.options.logger.warn(
              { err: error, groupId: options.groupId, topic, offset: message.offset, attempt },
              'event handler failed; retrying',
            );
            await delay(baseDelay * 2 ** (attempt - 1));
            await heartbeat();
          }
        }
      },
    });
    return {
      close: async () => {
        stopping = true;
        this.consumers.delete(consumer);
        await consumer.disconnect();
        // Its group now has no member and no offset: removed here at once (best effort; Kafka
        // removes such a group itself at its next offsets clean-up if this one fails, after a crash say).
        if (options.broadcast) {
          await this.admin.deleteGroups([this.qualify(options.groupId)]).catch((error: unknown) => {
            this.options.logger.info(
              { err: error, groupId: options.groupId },
              'broadcast consumer group not removed; Kafka removes it once expired',
            );
          });
        }
      },
    };
  }

  async ping(): Promise<void> {
    await this.connect();
    await this.admin.describeCluster();
  }

  async lag(groupId: string, topics: string[]): Promise<Record<string, number>> {
    await this.connect();
    const result: Record<string, number> = {};
    const committed = await this.admin.fetchOffsets({ groupId: this.qualify(groupId), topics: topics.map((topic) => this.qualify(topic)) });
    for (const topic of topics) {
      const ends = await this.admin.fetchTopicOffsets(this.qualify(topic)).catch(() => []);
      const mine = committed.find((entry) => entry.topic === this.qualify(topic))?.partitions ?? [];
      result[topic] = ends.reduce((sum, end) => {
        const at = Number(mine.find((partition) => partition.partition === end.partition)?.offset ?? '-1');
        return sum + Math.max(0, Number(end.high) - Math.max(at, Number(end.low)));
      }, 0);
    }
    return result;
  }

  async close(): Promise<void> {
    for (const consumer of [...this.consumers]) await consumer.disconnect().catch(() => undefined);
    this.consumers.clear();
    if (this.connected) {
      await this.producer.disconnect().catch(() => undefined);
      await this.admin.disconnect().catch(() => undefined);
    }
  }

  private connect(): Promise<void> {
    this.connected ??= Promise.all([this.producer.connect(), this.admin.connect()]).then(() => undefined);
    return this.connected;
  }

  private async ensureTopics(topics: string[]): Promise<void> {
    if (!this.options.createTopics) return;
    let missing = topics.filter((topic) => !this.knownTopics.has(topic));
    if (missing.length === 0) return;
    // Only those the cluster lacks: asking to create an existing topic makes kafkajs log an error.
    const present = new Set(await this.admin.listTopics());
    for (const topic of missing) if (present.has(this.qualify(topic))) this.knownTopics.add(topic);
    missing = missing.filter((topic) => !this.knownTopics.has(topic));
    if (missing.length === 0) return;
    await this.admin.createTopics({
      // Waited for below: kafkajs's own wait gives up on a broker that does not know the topic yet.
      waitForLeaders: false,
      topics: missing.map((topic) => ({
        topic: this.qualify(topic),
        numPartitions: this.options.partitions ?? 3,
        replicationFactor: this.options.replicationFactor ?? 1,
      })),
    });
    await waitForTopicLeaders(
      this.admin,
      missing.map((topic) => this.qualify(topic)),
    );
    for (const topic of missing) this.knownTopics.add(topic);
  }
}
