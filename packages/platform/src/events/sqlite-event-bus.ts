import { TimeSlices } from '../runtime/time-slices.js';
import { EventEmitter } from 'node:events';
import type { EventEnvelope } from '@portal/contracts';
import type { Logger } from 'pino';
import { openDatabase, type SqliteDatabase } from '../sqlite/open-database.js';
import { continueWork } from '../context/continue-work.js';
import {
  DEFAULT_DEAD_LETTER_RETENTION_MS,
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
import { PoisonMessageError } from '../resilience/failures.js';

const MIGRATIONS = [
  `CREATE TABLE messages (
     offset INTEGER PRIMARY KEY AUTOINCREMENT,
     topic TEXT NOT NULL,
     key TEXT NOT NULL,
     value TEXT NOT NULL,
     headers TEXT NOT NULL,
     timestamp INTEGER NOT NULL
   );
   CREATE INDEX messages_by_topic ON messages (topic, offset);
   CREATE TABLE consumer_offsets (
     group_id TEXT NOT NULL,
     topic TEXT NOT NULL,
     offset INTEGER NOT NULL,
     PRIMARY KEY (group_id, topic)
   );`,
  // When the group was last seen consuming: a group gone for long no longer holds messages back.
  `ALTER TABLE consumer_offsets ADD COLUMN seen_at INTEGER NOT NULL DEFAULT 0;`,
];

interface MessageRow {
  offset: number;
  topic: string;
  key: string;
  value: string;
  headers: string;
  timestamp: number;
}

export interface SqliteEventBusOptions {
  /** SQLite file holding the log, e.g. DATA_DIR/bus.sqlite. */
  file: string;
  logger: Logger;
  /** How often idle consumers look for messages written by another process (ms). */
  pollIntervalMs?: number;
  /** Messages older than this are deleted in any case (ms; default 7 days, like Kafka's default retention). */
  retentionMs?: number;
  /**
   * A message every consumer group of its topic has handled is deleted once it is this old (ms;
   * default 1 minute). Messages of a topic no group reads go after this long too; dead letters are
   * kept for deadLetterRetentionMs.
   */
  pruneAfterMs?: number;
  /** How long dead letters are kept (ms; default 14 days, DEAD_LETTER_RETENTION_MS). */
  deadLetterRetentionMs?: number;
  /** A group not seen consuming for this long no longer holds messages back (ms; default 1 hour). */
  groupGoneAfterMs?: number;
}

/**
 * The embedded event bus: a durable, Kafka-shaped log in one SQLite file. Topics are one ordered
 * log each, consumer groups keep a committed offset per topic, and a message is committed only
 * after its handler finished, so nothing is lost when the process stops mid-way.
 *
 * Retention: a message stays until every consumer group of its topic has handled it (plus a
 * short grace period), and never longer than retentionMs. Events name people (ids, and some carry
 * addresses for e-mails), so the log keeps nothing it no longer needs; with secure_delete and
 * the WAL scrub of openDatabase the bytes are gone from the file as well.
 */
export class SqliteEventBus implements EventBus {
  private readonly db: SqliteDatabase;
  private readonly wakeups = new EventEmitter();
  private readonly consumers = new Set<GroupConsumer>();
  private readonly pollIntervalMs: number;
  private readonly retentionTimer: NodeJS.Timeout;
  private readonly openedAt = Date.now();
  private readonly states = new ConsumerStates();
  private closed = false;

  constructor(private readonly options: SqliteEventBusOptions) {
    this.db = openDatabase(options.file, MIGRATIONS);
    this.pollIntervalMs = options.pollIntervalMs ?? 1000;
    this.wakeups.setMaxListeners(0);
    const pruneAfterMs = options.pruneAfterMs ?? 60_000;
    this.retentionTimer = setInterval(() => this.prune(), Math.max(250, Math.min(pruneAfterMs, 10_000)));
    this.retentionTimer.unref();
  }

  async publish(topic: string, messages: OutgoingMessage[]): Promise<void> {
    this.publishRaw(
      topic,
      messages.map((message) => {
        const traceparent = message.value.trace?.traceparent;
        return {
          key: message.key,
          value: JSON.stringify(message.value),
          headers: { ...(traceparent ? { traceparent } : {}), ...message.headers },
        };
      }),
    );
  }

  /** @internal Messages as stored (a dead letter keeps the exact value it had, even one that is no event). */
  publishRaw(topic: string, messages: { key: string; value: string; headers: Record<string, string> }[]): void {
    this.assertOpen();
    if (messages.length === 0) return;
    const insert = this.db.prepare('INSERT INTO messages (topic, key, value, headers, timestamp) VALUES (?, ?, ?, ?, ?)');
    const now = Date.now();
    this.db.transaction(() => {
      for (const message of messages) insert.run(topic, message.key, message.value, JSON.stringify(message.headers), now);
    })();
    this.wakeups.emit(topic);
  }

  async subscribe(options: SubscribeOptions): Promise<Subscription> {
    this.assertOpen();
    if (options.topics.length === 0) throw new Error('subscribe needs at least one topic');
    const state = this.states.register(options.groupId, options.topics);
    const consumer = new GroupConsumer(this, options, this.options.logger, this.pollIntervalMs, state);
    this.consumers.add(consumer);
    consumer.start();
    return {
      close: async () => {
        await consumer.stop();
        this.consumers.delete(consumer);
        state.remove();
        // A broadcast subscriber leaves no group behind.
        if (options.broadcast && !this.closed) this.db.prepare('DELETE FROM consumer_offsets WHERE group_id = ?').run(options.groupId);
      },
    };
  }

  async ping(): Promise<void> {
    this.assertOpen();
    this.db.prepare('SELECT 1').get();
  }

  consumerStates(): ConsumerState[] {
    return this.states.list();
  }

  async lag(groupId: string, topics: string[]): Promise<Record<string, number>> {
    this.assertOpen();
    const result: Record<string, number> = {};
    for (const topic of topics) {
      const committed =
        (
          this.db.prepare('SELECT offset FROM consumer_offsets WHERE group_id = ? AND topic = ?').get(groupId, topic) as
            { offset: number } | undefined
        )?.offset ?? 0;
      result[topic] = (
        this.db.prepare('SELECT COUNT(*) AS n FROM messages WHERE topic = ? AND offset > ?').get(topic, committed) as { n: number }
      ).n;
    }
    return result;
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    clearInterval(this.retentionTimer);
    await Promise.all([...this.consumers].map((consumer) => consumer.stop()));
    this.consumers.clear();
    this.db.close();
  }

  // --- used by GroupConsumer -------------------------------------------------------------

  /** @internal */
  isActiveMember(consumer: GroupConsumer): boolean {
    // One partition per topic: within a group only the earliest live member consumes; the
    // others stand by and take over when it leaves, as in a Kafka group with one partition.
    for (const other of this.consumers) {
      if (other.groupId === consumer.groupId && other.running && sameTopics(other.topics, consumer.topics)) {
        return other === consumer;
      }
    }
    return false;
  }

  /** @internal */
  committedOffset(groupId: string, topic: string, fromBeginning: boolean): number {
    const row = this.db.prepare('SELECT offset FROM consumer_offsets WHERE group_id = ? AND topic = ?').get(groupId, topic) as
      { offset: number } | undefined;
    if (row) return row.offset;
    const start = fromBeginning
      ? 0
      : ((this.db.prepare('SELECT MAX(offset) AS max FROM messages WHERE topic = ?').get(topic) as { max: number | null }).max ?? 0);
    this.commit(groupId, topic, start);
    return start;
  }

  /** @internal */
  commit(groupId: string, topic: string, offset: number): void {
    this.db
      .prepare(
        `INSERT INTO consumer_offsets (group_id, topic, offset, seen_at) VALUES (?, ?, ?, ?)
         ON CONFLICT (group_id, topic) DO UPDATE SET offset = MAX(offset, excluded.offset), seen_at = excluded.seen_at`,
      )
      .run(groupId, topic, offset, Date.now());
  }

  /** @internal A live group says it is still there (even with nothing to consume). */
  touch(groupId: string, topic: string): void {
    this.db.prepare('UPDATE consumer_offsets SET seen_at = ? WHERE group_id = ? AND topic = ?').run(Date.now(), groupId, topic);
  }

  /** @internal Messages after an offset; a value that is no event envelope comes with the reason (a poison message). */
  readAfter(topic: string, offset: number, limit: number): StoredMessage[] {
    const rows = this.db
      .prepare('SELECT * FROM messages WHERE topic = ? AND offset > ? ORDER BY offset LIMIT ?')
      .all(topic, offset, limit) as MessageRow[];
    return rows.map((row) => storedMessage(row));
  }

  /**
   * @internal The messages of a topic stored at or after a time, oldest first (the dead-letter
   * command reads the dead letters with it).
   */
  readSince(topic: string, since: number): StoredMessage[] {
    const rows = this.db
      .prepare('SELECT * FROM messages WHERE topic = ? AND timestamp >= ? ORDER BY offset')
      .all(topic, since) as MessageRow[];
    return rows.map((row) => storedMessage(row));
  }

  /** @internal */
  onPublish(topics: string[], listener: () => void): () => void {
    for (const topic of topics) this.wakeups.on(topic, listener);
    return () => {
      for (const topic of topics) this.wakeups.off(topic, listener);
    };
  }

  /** @internal */
  get isClosed(): boolean {
    return this.closed;
  }

  /**
   * Deletes what no one needs any more: messages every group of their topic has handled (or of
   * topics nobody reads) once older than the grace period, dead letters and everything else after
   * the retention period. A group not seen for groupGoneAfterMs (a replaced instance) is forgotten,
   * but only once this bus has been open that long, so groups of a process that was down are not.
   */
  prune(): void {
    if (this.closed) return;
    const now = Date.now();
    const goneAfter = this.options.groupGoneAfterMs ?? 3600_000;
    this.db.transaction(() => {
      if (now - this.openedAt > goneAfter) this.db.prepare('DELETE FROM consumer_offsets WHERE seen_at < ?').run(now - goneAfter);
      this.db
        .prepare(
          `DELETE FROM messages WHERE timestamp < ? AND topic NOT LIKE '%.dead-letter'
             AND offset <= COALESCE((SELECT MIN(o.offset) FROM consumer_offsets o WHERE o.topic = messages.topic), offset)`,
        )
        .run(now - (this.options.pruneAfterMs ?? 60_000));
      this.db
        .prepare(`DELETE FROM messages WHERE timestamp < ? AND topic NOT LIKE '%.dead-letter'`)
        .run(now - (this.options.retentionMs ?? 7 * 24 * 3600_000));
      this.db
        .prepare(`DELETE FROM messages WHERE timestamp < ? AND topic LIKE '%.dead-letter'`)
        .run(now - (this.options.deadLetterRetentionMs ?? DEFAULT_DEAD_LETTER_RETENTION_MS));
    })();
  }

  private assertOpen(): void {
    if (this.closed) throw new Error('The event bus is closed');
  }
}

/** A stored message: as a consumer receives it, or, when its value is no event, why (a poison message). */
export interface StoredMessage {
  message: BusMessage;
  /** The value as stored. */
  raw: string;
  poison: PoisonMessageError | null;
}

function storedMessage(row: MessageRow): StoredMessage {
  const decoded = decodeEnvelope(row.value);
  const poison = decoded instanceof PoisonMessageError ? decoded : null;
  return {
    message: {
      topic: row.topic,
      key: row.key,
      value: poison ? (null as unknown as EventEnvelope) : (decoded as EventEnvelope),
      headers: JSON.parse(row.headers) as Record<string, string>,
      offset: String(row.offset),
      timestamp: row.timestamp,
    },
    raw: row.value,
    poison,
  };
}

function sameTopics(a: readonly string[], b: readonly string[]): boolean {
  return a.length === b.length && a.every((topic) => b.includes(topic));
}

class GroupConsumer {
  readonly groupId: string;
  readonly topics: string[];
  running = false;
  private loop: Promise<void> | undefined;
  private wake: (() => void) | undefined;
  private readonly abort = new AbortController();
  private lastTouch = 0;

  constructor(
    private readonly bus: SqliteEventBus,
    private readonly options: SubscribeOptions,
    private readonly logger: Logger,
    private readonly pollIntervalMs: number,
    private readonly state: ConsumerStateHandle,
  ) {
    this.groupId = options.groupId;
    this.topics = [...new Set(options.topics)];
  }

  start(): void {
    this.running = true;
    this.loop = this.run().catch((error: unknown) => {
      if (!this.abort.signal.aborted) this.logger.error({ err: error, groupId: this.groupId }, 'event consumer stopped');
    });
  }

  async stop(): Promise<void> {
    if (!this.running) return;
    this.running = false;
    this.abort.abort();
    this.wake?.();
    await this.loop;
  }

  private async run(): Promise<void> {
    let pending = false;
    const unsubscribe = this.bus.onPublish(this.topics, () => {
      pending = true;
      this.wake?.();
    });
    try {
      while (this.running && !this.bus.isClosed) {
        pending = false;
        const handledAny = this.bus.isActiveMember(this) ? await this.drainOnce() : false;
        if (!handledAny && !pending && this.running) await this.sleep();
      }
    } finally {
      unsubscribe();
    }
  }

  private readonly slices = new TimeSlices();

  /** Handles one batch of every topic in offset order; true when something was handled. */
  private async drainOnce(): Promise<boolean> {
    const fromBeginning = this.options.fromBeginning ?? true;
    const batch: StoredMessage[] = [];
    const touch = Date.now() - this.lastTouch > 60_000;
    if (touch) this.lastTouch = Date.now();
    for (const topic of this.topics) {
      const committed = this.bus.committedOffset(this.groupId, topic, fromBeginning);
      if (touch) this.bus.touch(this.groupId, topic);
      batch.push(...this.bus.readAfter(topic, committed, 100));
    }
    batch.sort((a, b) => Number(a.message.offset) - Number(b.message.offset));
    for (const stored of batch) {
      if (!this.running) return true;
      const done = await this.deliver(stored);
      if (!done) return true; // stopping: leave the offset uncommitted so the message comes again
      this.bus.commit(this.groupId, stored.message.topic, Number(stored.message.offset));
      // Handlers on embedded stores answer at once (microtasks): a backlog of thousands of events
      // (a box office's import) is handled in slices, with the process's requests answered between.
      await this.slices.maybeYield();
    }
    return batch.length > 0;
  }

  /** Delivers one message under the consumer policy; false only when the consumer is stopping. */
  private async deliver({ message, raw, poison }: StoredMessage): Promise<boolean> {
    try {
      await deliverMessage({
        groupId: this.groupId,
        message,
        handle: () =>
          poison
            ? Promise.reject(poison)
            : continueWork(
                { traceparent: message.headers.traceparent ?? message.value.trace?.traceparent, requestId: message.value.trace?.requestId },
                { handler: this.groupId, span: `${message.topic} process`, attributes: { 'messaging.consumer.group.name': this.groupId } },
                () => this.options.handler(message),
              ),
        deadLetter: async (failure) => {
          this.bus.publishRaw(deadLetterTopic(message.topic), [
            { key: message.key, value: raw, headers: deadLetterHeaders(message, this.groupId, failure) },
          ]);
        },
        signal: this.abort.signal,
        policy: {
          maxAttempts: this.options.maxAttempts ?? 5,
          retryDelayMs: this.options.retryDelayMs ?? 200,
          hold: this.options.holdBackoff ?? DEFAULT_HOLD_BACKOFF,
          ...(this.options.dependencies ? { dependencies: this.options.dependencies } : {}),
        },
        state: this.state,
        logger: this.logger,
      });
      return true;
    } catch (error) {
      if (this.abort.signal.aborted) return false;
      throw error;
    }
  }

  private sleep(): Promise<void> {
    return new Promise((resolve) => {
      const timer = setTimeout(done, this.pollIntervalMs);
      function done(): void {
        clearTimeout(timer);
        resolve();
      }
      this.wake = () => {
        this.wake = undefined;
        done();
      };
    });
  }
}
