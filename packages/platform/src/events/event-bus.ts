import type { EventEnvelope } from '@portal/contracts';
import type { HealthCheck } from '../runtime/health-server.js';
import type { Backoff } from '../resilience/backoff.js';
import type { ConsumerState } from './consumer-policy.js';

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
  /**
   * Tries of a handler that fails for no recognised reason (neither poison nor a dependency away:
   * see classifyFailure) before its message goes to the dead-letter topic (default 5).
   */
  maxAttempts?: number;
  /** First retry delay in ms of those tries, doubled on every further attempt (default 200). */
  retryDelayMs?: number;
  /** Waits between tries while a dependency is away (default 0.5 s doubling to 15 s, without end). */
  holdBackoff?: Backoff;
  /**
   * What the handler needs (the service's readiness checks of its stores): a failure not
   * recognised as a dependency's is taken for one, and held, when one of these does not answer.
   */
  dependencies?: HealthCheck[];
  /** Stops trying to subscribe (the process stops while Kafka is away): subscribe rejects. */
  signal?: AbortSignal;
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
 * - a handler that fails because a dependency is away (classifyFailure, or a dependency check
 *   that does not answer) holds its message, and the group's later messages, until it succeeds:
 *   nothing is committed meanwhile, it is tried again after a capped backoff without end, and
 *   consumerStates() says what the group waits for;
 * - a poison message (PoisonMessageError, a failed schema, a value that is no event envelope) is
 *   copied to `<topic>.dead-letter` at once and the group moves on; so is one whose handler keeps
 *   failing for no recognised reason, after maxAttempts;
 * - a message replayed from the dead letters for one group (header x-replay-for-group) is handled
 *   by that group alone;
 * - every group sees every message (publish/subscribe across groups);
 * - subscribe resolves once the group consumes; while the broker is away it keeps trying (a
 *   capped backoff) and consumerStates() says so.
 */
export interface EventBus {
  publish(topic: string, messages: OutgoingMessage[]): Promise<void>;
  subscribe(options: SubscribeOptions): Promise<Subscription>;
  /** Resolves when the bus can be used; rejects otherwise (readiness checks). */
  ping(): Promise<void>;
  /** This client's subscriptions: what each holds or waits for, and the dead letters it wrote. */
  consumerStates(): ConsumerState[];
  /** Messages published to each topic that the group has not handled yet (its consumer lag). */
  lag(groupId: string, topics: string[]): Promise<Record<string, number>>;
  close(): Promise<void>;
}

/** How long dead letters are kept by default (DEAD_LETTER_RETENTION_MS): two weeks, to look at them and replay them. */
export const DEFAULT_DEAD_LETTER_RETENTION_MS = 14 * 24 * 3600_000;

export function deadLetterTopic(topic: string): string {
  return `${topic}.dead-letter`;
}
