// Before any kafkajs client is made: its idle timer loop, fixed (see the module).
import './kafkajs-idle-loop-fix.js';
import { Kafka, logLevel, type Admin, type Consumer, type Producer, type IHeaders } from 'kafkajs';
import type { EventEnvelope } from '@portal/contracts';
import type { Logger } from 'pino';
import { continueWork } from '../context/continue-work.js';
import { backoffDelay, sleep } from '../resilience/backoff.js';
import { PoisonMessageError, describeError } from '../resilience/failures.js';
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
import {
  ConsumerStates,
  DEFAULT_HOLD_BACKOFF,
  deadLetterHeaders,
  decodeEnvelope,
  deliverMessage,
  type ConsumerState,
  type ConsumerStateHandle,
} from './consumer-policy.js';

/** Tries to subscribe while the brokers are away: 1 s, 2 s, 4 s... then every 30 s, without end. */
const SUBSCRIBE_BACKOFF = { initialMs: 1_000, maxMs: 30_000 };

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

/** Kafka's header values (Buffers, arrays) as strings. */
export function headersToStrings(headers: IHeaders | undefined): Record<string, string> {
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
 * finished (at least once), the consumer policy (consumer-policy.ts: a dependency away holds the
 * message, poison goes to `<topic>.dead-letter`), and subscriptions that wait for the brokers.
 */
export class KafkaEventBus implements EventBus {
  private readonly kafka: Kafka;
  private readonly producer: Producer;
  private readonly admin: Admin;
  private readonly consumers = new Set<Consumer>();
  private readonly knownTopics = new Set<string>();
  private readonly states = new ConsumerStates();
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

  /**
   * Resolves once the group consumes. While the brokers are away it keeps trying (a capped
   * backoff, without end, until `options.signal` aborts), and consumerStates() says so: a service
   * that starts during a Kafka outage serves meanwhile and consumes once Kafka is back.
   */
  async subscribe(options: SubscribeOptions): Promise<Subscription> {
    const state = this.states.register(options.groupId, options.topics);
    // Not consuming until it has joined its group: readiness says so from the start.
    state.subscribing('connecting to kafka');
    const stop = new AbortController();
    const abortWith = () => stop.abort(options.signal?.reason ?? new Error('subscription cancelled'));
    options.signal?.addEventListener('abort', abortWith, { once: true });
    // The group's consumer now: a new one replaces it after a crash kafkajs does not restart from.
    const current: { consumer?: Consumer } = {};
    // A stop does not wait for a connection attempt kafkajs is still retrying (a shutdown while
    // Kafka is away): the attempt's consumer, if it ever connects, is let go.
    const stopped = new Promise<never>((_, reject) => {
      if (stop.signal.aborted) reject(stop.signal.reason);
      stop.signal.addEventListener('abort', () => reject(stop.signal.reason), { once: true });
    });
    stopped.catch(() => undefined);
    for (let attempt = 1; ; attempt++) {
      try {
        const attemptDone = this.consume(options, state, stop.signal, current);
        attemptDone.then(
          async () => {
            if (stop.signal.aborted) await current.consumer?.disconnect().catch(() => undefined);
          },
          () => undefined,
        );
        await Promise.race([attemptDone, stopped]);
        state.subscribed();
        break;
      } catch (error) {
        if (stop.signal.aborted) {
          state.remove();
          throw error;
        }
        state.subscribing(describeError(error));
        const wait = backoffDelay(attempt, SUBSCRIBE_BACKOFF);
        const where = { groupId: options.groupId, reason: describeError(error), attempt, retryInMs: wait };
        if (attempt === 1 || attempt % 10 === 0)
          this.options.logger.warn(where, 'cannot subscribe yet: Kafka does not answer; trying again');
        await sleep(wait, stop.signal).catch((reason: unknown) => {
          state.remove();
          throw reason;
        });
      }
    }
    return {
      close: async () => {
        options.signal?.removeEventListener('abort', abortWith);
        stop.abort(new Error('subscription closed'));
        const consumer = current.consumer;
        if (consumer) {
          this.consumers.delete(consumer);
          await consumer.disconnect();
        }
        state.remove();
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

  /** One consumer of the group, connected, subscribed and running; thrown away when a step fails. */
  private async consume(
    options: SubscribeOptions,
    state: ConsumerStateHandle,
    signal: AbortSignal,
    current: { consumer?: Consumer },
  ): Promise<void> {
    const consumer = this.kafka.consumer({
      groupId: this.qualify(options.groupId),
      sessionTimeout: 30_000,
      heartbeatInterval: 3_000,
      allowAutoTopicCreation: false,
    });
    try {
      await this.connect();
      await this.ensureTopics(options.topics);
      await consumer.connect();
      await consumer.subscribe({
        topics: options.topics.map((topic) => this.qualify(topic)),
        fromBeginning: options.fromBeginning ?? true,
      });
    } catch (error) {
      await consumer.disconnect().catch(() => undefined);
      throw error;
    }
    this.consumers.add(consumer);
    current.consumer = consumer;
    // While the brokers are away kafkajs's consumer crashes and restarts itself: readiness says so.
    // A crash it does not restart from (an error it deems final) gets a new consumer, as at the start.
    consumer.on(consumer.events.GROUP_JOIN, () => state.subscribed());
    consumer.on(consumer.events.CRASH, ({ payload }) => {
      if (signal.aborted) return;
      state.subscribing(describeError(payload.error));
      if (payload.restart) return;
      this.options.logger.warn({ groupId: options.groupId, reason: describeError(payload.error) }, 'consumer stopped; subscribing again');
      this.consumers.delete(consumer);
      void consumer
        .disconnect()
        .catch(() => undefined)
        .then(() => this.resubscribe(options, state, signal, current));
    });
    const policy = {
      maxAttempts: options.maxAttempts ?? 5,
      retryDelayMs: options.retryDelayMs ?? 200,
      hold: options.holdBackoff ?? DEFAULT_HOLD_BACKOFF,
      ...(options.dependencies ? { dependencies: options.dependencies } : {}),
    };
    await consumer.run({
      // A broadcast subscriber keeps no offsets: Kafka removes a group that is empty and has none.
      autoCommit: options.broadcast !== true,
      eachMessage: async ({ topic: qualified, partition, message, heartbeat }) => {
        const topic = this.unqualify(qualified);
        const decoded = decodeEnvelope(message.value?.toString());
        const poison = decoded instanceof PoisonMessageError ? decoded : null;
        const busMessage: BusMessage = {
          topic,
          key: message.key?.toString() ?? '',
          value: poison ? (null as unknown as EventEnvelope) : (decoded as EventEnvelope),
          headers: headersToStrings(message.headers),
          offset: message.offset,
          timestamp: Number(message.timestamp),
        };
        await deliverMessage({
          groupId: options.groupId,
          message: busMessage,
          handle: () =>
            poison
              ? Promise.reject(poison)
              : continueWork(
                  {
                    traceparent: busMessage.headers.traceparent ?? busMessage.value.trace?.traceparent,
                    requestId: busMessage.value.trace?.requestId,
                  },
                  { handler: options.groupId, span: `${topic} process`, attributes: { 'messaging.consumer.group.name': options.groupId } },
                  () => options.handler(busMessage),
                ),
          // The dead letter keeps the exact bytes it came with (a value that is no JSON included).
          deadLetter: async (failure) => {
            await this.ensureTopics([deadLetterTopic(topic)]);
            await this.producer.send({
              topic: this.qualify(deadLetterTopic(topic)),
              acks: -1,
              messages: [
                { key: message.key, value: message.value, headers: deadLetterHeaders(busMessage, options.groupId, failure, partition) },
              ],
            });
          },
          keepAlive: heartbeat,
          signal,
          policy,
          state,
          logger: this.options.logger,
        });
      },
    });
  }

  /** A new consumer for a group whose consumer stopped for good, tried until it runs or the subscription closes. */
  private async resubscribe(
    options: SubscribeOptions,
    state: ConsumerStateHandle,
    signal: AbortSignal,
    current: { consumer?: Consumer },
  ): Promise<void> {
    for (let attempt = 1; !signal.aborted; attempt++) {
      try {
        await this.consume(options, state, signal, current);
        if (signal.aborted) await current.consumer?.disconnect();
        else state.subscribed();
        return;
      } catch (error) {
        state.subscribing(describeError(error));
        await sleep(backoffDelay(attempt, SUBSCRIBE_BACKOFF), signal).catch(() => undefined);
      }
    }
  }

  consumerStates(): ConsumerState[] {
    return this.states.list();
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

  /** Connects the producer and the admin client once; a failed connection is tried again by the next call. */
  private connect(): Promise<void> {
    this.connected ??= Promise.all([this.producer.connect(), this.admin.connect()]).then(
      () => undefined,
      (error: unknown) => {
        this.connected = undefined;
        throw error;
      },
    );
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
