import { join } from 'node:path';
import type { Logger } from 'pino';
import { Kafka, logLevel } from 'kafkajs';
import type { InfrastructureSettings } from '../runtime/infrastructure.js';
import { DEAD_LETTER_HEADERS, REPLAY_HEADERS, decodeEnvelope } from './consumer-policy.js';
import { deadLetterTopic } from './event-bus.js';
import { SqliteEventBus } from './sqlite-event-bus.js';
import { headersToStrings } from './kafka-event-bus.js';
import { PoisonMessageError } from '../resilience/failures.js';
import { untilAvailable } from '../resilience/backoff.js';

/** A message in a dead-letter topic, as the dead-letter command lists and replays it. */
export interface DeadLetter {
  /** The topic it was read from (its plain name). */
  topic: string;
  /** Where it is in the dead-letter topic: `<partition>:<offset>` (Kafka) or `<offset>` (embedded). */
  id: string;
  /** When it was written to the dead letters (ms). */
  at: number;
  key: string;
  /** The value as it came (an event envelope, or the malformed bytes of a poison message). */
  value: string;
  headers: Record<string, string>;
  /** The consumer group that could not handle it. */
  group: string;
  kind: string;
  error: string;
  /** When it was replayed (the latest time), if it was. */
  replayedAt: number | null;
}

/** The header of a record that notes a dead letter as replayed (written to the dead-letter topic itself). */
export const REPLAY_RECORD_HEADER = 'x-replay-record';

/** Where dead letters are kept: Kafka's `<topic>.dead-letter` topics, or the embedded bus's log. */
export interface DeadLetterStore {
  /** The dead letters of a topic written since a time, oldest first, each with whether it was replayed. */
  list(topic: string, since: number): Promise<DeadLetter[]>;
  /** Writes a dead letter back to its topic, for its group alone, and notes it as replayed. */
  replay(letter: DeadLetter): Promise<void>;
  close(): Promise<void>;
}

interface RawRecord {
  id: string;
  at: number;
  key: string;
  value: string;
  headers: Record<string, string>;
}

/** Dead letters and replay notes among a dead-letter topic's records. */
function deadLettersOf(topic: string, records: RawRecord[], since: number): DeadLetter[] {
  const replayed = new Map<string, number>();
  for (const record of records) {
    const of = record.headers[REPLAY_RECORD_HEADER];
    if (of !== undefined) replayed.set(of, Math.max(replayed.get(of) ?? 0, record.at));
  }
  return records
    .filter((record) => record.headers[REPLAY_RECORD_HEADER] === undefined && record.at >= since)
    .map((record) => ({
      topic,
      id: record.id,
      at: record.at,
      key: record.key,
      value: record.value,
      headers: record.headers,
      group: record.headers[DEAD_LETTER_HEADERS.group] ?? '',
      kind: record.headers[DEAD_LETTER_HEADERS.kind] ?? 'failed',
      error: record.headers[DEAD_LETTER_HEADERS.error] ?? '',
      replayedAt: replayed.get(record.id) ?? null,
    }));
}

/** The headers the replayed message carries: the original's, for its group, naming the dead letter it replays. */
function replayHeaders(letter: DeadLetter, now: number): Record<string, string> {
  const own = Object.fromEntries(
    Object.entries(letter.headers).filter(([name]) => !Object.values(DEAD_LETTER_HEADERS).includes(name as never)),
  );
  return {
    ...own,
    [REPLAY_HEADERS.forGroup]: letter.group,
    [REPLAY_HEADERS.of]: letter.id,
    [REPLAY_HEADERS.at]: new Date(now).toISOString(),
  };
}

function replayRecord(letter: DeadLetter, now: number): { key: string; value: string; headers: Record<string, string> } {
  return {
    key: letter.key,
    value: JSON.stringify({ replayed: letter.id, group: letter.group, at: new Date(now).toISOString() }),
    headers: { [REPLAY_RECORD_HEADER]: letter.id },
  };
}

/** The embedded bus's dead letters, in DATA_DIR/bus.sqlite (the portal may be running: SQLite lets both at it). */
export class EmbeddedDeadLetters implements DeadLetterStore {
  constructor(private readonly bus: SqliteEventBus) {}

  async list(topic: string, since: number): Promise<DeadLetter[]> {
    const records = this.bus.readSince(deadLetterTopic(topic), 0).map(({ message, raw }) => ({
      id: message.offset,
      at: message.timestamp,
      key: message.key,
      value: raw,
      headers: message.headers,
    }));
    return deadLettersOf(topic, records, since);
  }

  async replay(letter: DeadLetter): Promise<void> {
    const now = Date.now();
    this.bus.publishRaw(letter.topic, [{ key: letter.key, value: letter.value, headers: replayHeaders(letter, now) }]);
    this.bus.publishRaw(deadLetterTopic(letter.topic), [replayRecord(letter, now)]);
  }

  async close(): Promise<void> {
    await this.bus.close();
  }
}

/** Kafka's `<namespace>.<topic>.dead-letter` topics, read whole (they are small) by a consumer group of the command's own, removed after. */
export class KafkaDeadLetters implements DeadLetterStore {
  private readonly kafka: Kafka;
  private readonly producer;

  constructor(
    private readonly settings: Pick<InfrastructureSettings, 'kafka' | 'namespace'> & { kafkaBrokers: string[] },
    private readonly logger: Logger,
    private readonly timeoutMs = 60_000,
  ) {
    this.kafka = new Kafka({
      clientId: 'portal-dead-letters',
      brokers: settings.kafkaBrokers,
      ...(settings.kafka.ssl ? { ssl: settings.kafka.ssl } : {}),
      ...(settings.kafka.sasl ? { sasl: settings.kafka.sasl } : {}),
      logLevel: logLevel.NOTHING,
      retry: { retries: 5, initialRetryTime: 300, maxRetryTime: 5_000 },
    });
    this.producer = this.kafka.producer({ idempotent: true, maxInFlightRequests: 1, allowAutoTopicCreation: false });
  }

  private qualify(topic: string): string {
    return `${this.settings.namespace}.${topic}`;
  }

  /** Tried again while the brokers do not answer (a coordinator moving, say), for at most timeoutMs. */
  list(topic: string, since: number): Promise<DeadLetter[]> {
    return untilAvailable(() => this.read(topic, since), {
      what: `reading ${deadLetterTopic(topic)}`,
      logger: this.logger,
      signal: AbortSignal.timeout(this.timeoutMs),
      backoff: { initialMs: 500, maxMs: 5_000 },
    });
  }

  private async read(topic: string, since: number): Promise<DeadLetter[]> {
    const qualified = this.qualify(deadLetterTopic(topic));
    const admin = this.kafka.admin();
    await admin.connect();
    let ends: { partition: number; high: string; low: string }[];
    try {
      ends = await admin.fetchTopicOffsets(qualified);
    } finally {
      await admin.disconnect();
    }
    // What is there now, partition by partition: read up to those ends, then stop.
    const pending = new Map(ends.filter((end) => Number(end.high) > Number(end.low)).map((end) => [end.partition, Number(end.high) - 1]));
    if (pending.size === 0) return [];
    const records: RawRecord[] = [];
    const groupId = `${this.settings.namespace}.dead-letters-command.${process.pid}.${Date.now()}`;
    const consumer = this.kafka.consumer({ groupId, allowAutoTopicCreation: false });
    await consumer.connect();
    try {
      await consumer.subscribe({ topics: [qualified], fromBeginning: true });
      await new Promise<void>((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error(`could not read ${qualified} within ${this.timeoutMs / 1000} s`)), this.timeoutMs);
        void consumer
          .run({
            autoCommit: false,
            eachMessage: async ({ partition, message }) => {
              const last = pending.get(partition);
              if (last === undefined) return;
              records.push({
                id: `${partition}:${message.offset}`,
                at: Number(message.timestamp),
                key: message.key?.toString() ?? '',
                value: message.value?.toString() ?? '',
                headers: headersToStrings(message.headers),
              });
              if (Number(message.offset) >= last) pending.delete(partition);
              if (pending.size === 0) {
                clearTimeout(timer);
                resolve();
              }
            },
          })
          .catch(reject);
      });
    } finally {
      await consumer.disconnect();
      const admin2 = this.kafka.admin();
      await admin2.connect();
      await admin2.deleteGroups([groupId]).catch(() => undefined);
      await admin2.disconnect();
    }
    records.sort((a, b) => a.at - b.at);
    return deadLettersOf(topic, records, since);
  }

  async replay(letter: DeadLetter): Promise<void> {
    await this.producer.connect();
    const now = Date.now();
    await this.producer.send({
      topic: this.qualify(letter.topic),
      acks: -1,
      messages: [{ key: letter.key, value: letter.value, headers: replayHeaders(letter, now) }],
    });
    await this.producer.send({ topic: this.qualify(deadLetterTopic(letter.topic)), acks: -1, messages: [replayRecord(letter, now)] });
  }

  async close(): Promise<void> {
    await this.producer.disconnect().catch(() => undefined);
  }
}

/** The dead-letter store of the bus the environment names: Kafka, or the embedded log under DATA_DIR. */
export function openDeadLetters(settings: InfrastructureSettings, logger: Logger): DeadLetterStore {
  return settings.kafkaBrokers
    ? new KafkaDeadLetters({ ...settings, kafkaBrokers: settings.kafkaBrokers }, logger)
    : new EmbeddedDeadLetters(new SqliteEventBus({ file: join(settings.dataDir, 'bus.sqlite'), logger }));
}

/** What a dead letter holds, in a few words: its event's type and id, or why its value is none. */
export function describeDeadLetterValue(letter: Pick<DeadLetter, 'value'>): string {
  const decoded = decodeEnvelope(letter.value);
  return decoded instanceof PoisonMessageError ? `(${decoded.message})` : `${decoded.type} ${decoded.id}`;
}
