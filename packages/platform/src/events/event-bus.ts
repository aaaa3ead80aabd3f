import type { EventEnvelope } from '@portal/contracts';

/** A message as a consumer receives it. */
export interface BusMessage {
  topic: string;
  key: string;
  value: EventEnvelope;
  headers: Record<string, string>;
  /** Position in the topic, as a decimal string (Kafka offsets do not fit a JS number safely). */
  offset: string;
  timestamp: number;
}

export interface OutgoingMessage {
  key: string;
  value: EventEnvelope;
  headers?: Record<string, string>;
}

export type MessageHandler = (message: BusMessage) => Promise<void>;

export interface SubscribeOptions {
  /** Consumers sharing a group id share the work; each message is handled by one of them. */
  groupId: string;
  topics: string[];
  handler: MessageHandler;
  /** Where a group with no committed offset starts: at the beginning (default) or at the end. */
  fromBeginning?: boolean;
  /** Attempts before a message goes to the dead-letter topic (default 5). */
  maxAttempts?: number;
  /** First retry delay in ms, doubled on every further attempt (default 200). */
  retryDelayMs?: number;
  /**
   * A subscriber that must see every message from now on while it runs, alone in its group (each
   * gateway replica, say, evicting its own caches), and never what came before it started: nothing
   * it handled is remembered for a later subscriber (no offsets committed), and its group is
   * removed when it closes, so that replicas coming and going leave no groups behind.
   */
  broadcast?: boolean;
}

export interface Subscription {
  close(): Promise<void>;
}

/**
 * The event bus port. Contract (shared by the embedded and the Kafka adapters):
 * - messages of one topic with the same key are delivered in the order they were published;
 * - delivery is at least once: a message whose handler did not finish is delivered again,
 *   to the same group, after a failure or a restart, so handlers must be idempotent;
 * - a handler that keeps failing does not block its topic forever: after maxAttempts the
 *   message is copied to `<topic>.dead-letter` and the group moves on;
 * - every group sees every message (publish/subscribe across groups).
 */
export interface EventBus {
  publish(topic: string, messages: OutgoingMessage[]): Promise<void>;
  subscribe(options: SubscribeOptions): Promise<Subscription>;
  /** Resolves when the bus can be used; rejects otherwise (readiness checks). */
  ping(): Promise<void>;
  /** Messages published to each topic that the group has not handled yet (its consumer lag). */
  lag(groupId: string, topics: string[]): Promise<Record<string, number>>;
  close(): Promise<void>;
}

export function deadLetterTopic(topic: string): string {
  return `${topic}.dead-letter`;
}
