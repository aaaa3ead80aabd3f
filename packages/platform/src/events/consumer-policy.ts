import { eventEnvelopeSchema, type EventEnvelope } from '@portal/contracts';
import type { Logger } from 'pino';
import type { HealthCheck } from '../runtime/health-server.js';
import { backoffDelay, sleep, type Backoff } from '../resilience/backoff.js';
import { PoisonMessageError, classifyFailure, type FailureKind } from '../resilience/failures.js';
import type { BusMessage } from './event-bus.js';

/**
 * What every consumer of either bus does with a message, in one place (both adapters call
 * deliverMessage): a handler that fails because a dependency is away holds its message, and the
 * messages after it, until the dependency answers (no commit, a capped backoff, without end); only
 * a poison message (or one that keeps failing for no recognised reason) becomes a dead letter.
 */

/** Headers a dead letter carries besides the original message's own. */
export const DEAD_LETTER_HEADERS = {
  group: 'x-dead-letter-group',
  error: 'x-dead-letter-error',
  kind: 'x-dead-letter-kind',
  topic: 'x-dead-letter-topic',
  offset: 'x-dead-letter-offset',
  partition: 'x-dead-letter-partition',
  at: 'x-dead-letter-at',
} as const;

/**
 * Headers of a dead letter replayed to its topic: the group it is for (every other group skips it:
 * they handled the original), and which dead letter it is (the command replays each once).
 */
export const REPLAY_HEADERS = { forGroup: 'x-replay-for-group', of: 'x-replay-of', at: 'x-replay-at' } as const;

/** How a subscriber retries: unrecognised failures a few times, a dependency's without end. */
export interface DeliveryPolicy {
  /** Tries of a handler failing for no recognised reason before its message becomes a dead letter. */
  maxAttempts: number;
  /** First wait between those tries (ms), doubled each time. */
  retryDelayMs: number;
  /** Waits while a dependency is away. */
  hold: Backoff;
  /**
   * The dependencies the handler needs (its service's readiness checks): a failure not recognised
   * as a dependency's is taken for one when one of these does not answer, rather than dead-lettered.
   */
  dependencies?: HealthCheck[];
}

export const DEFAULT_HOLD_BACKOFF: Backoff = { initialMs: 500, maxMs: 15_000 };

// --- what each consumer is doing, for readiness and metrics ------------------------------------

export interface ConsumerHold {
  topic: string;
  /** What it waits for (kafka, mongodb, redis, s3, smtp, ...). */
  dependency: string;
  since: number;
  reason: string;
}

/** One subscription of this process, as readiness and the metrics report it. */
export interface ConsumerState {
  groupId: string;
  topics: string[];
  /** Set while it cannot subscribe yet (Kafka away when the process started): since when, and why. */
  subscribing: { since: number; reason: string } | null;
  /** Topics whose messages it holds because a dependency is away. */
  holds: ConsumerHold[];
  /** Messages it wrote to a dead-letter topic, by original topic, since the process started. */
  deadLetters: Record<string, number>;
  /** Tries of a held message that failed because its dependency was still away, by topic, since the process started. */
  holdTries: Record<string, number>;
}

export interface ConsumerStateHandle {
  subscribing(reason: string): void;
  subscribed(): void;
  hold(topic: string, dependency: string, reason: string): void;
  release(topic: string): void;
  deadLettered(topic: string): void;
  remove(): void;
}

/** The subscriptions of one bus client (one process), with what each is doing. */
export class ConsumerStates {
  private readonly states = new Set<ConsumerState>();

  register(groupId: string, topics: string[]): ConsumerStateHandle {
    const state: ConsumerState = { groupId, topics: [...topics], subscribing: null, holds: [], deadLetters: {}, holdTries: {} };
    this.states.add(state);
    return {
      subscribing: (reason) => {
        state.subscribing = { since: state.subscribing?.since ?? Date.now(), reason };
      },
      subscribed: () => {
        state.subscribing = null;
      },
      hold: (topic, dependency, reason) => {
        state.holdTries[topic] = (state.holdTries[topic] ?? 0) + 1;
        const existing = state.holds.find((hold) => hold.topic === topic);
        if (existing) Object.assign(existing, { dependency, reason });
        else state.holds.push({ topic, dependency, reason, since: Date.now() });
      },
      release: (topic) => {
        state.holds = state.holds.filter((hold) => hold.topic !== topic);
      },
      deadLettered: (topic) => {
        state.deadLetters[topic] = (state.deadLetters[topic] ?? 0) + 1;
      },
      remove: () => {
        this.states.delete(state);
      },
    };
  }

  list(): ConsumerState[] {
    return [...this.states].map((state) => ({
      ...state,
      holds: [...state.holds],
      deadLetters: { ...state.deadLetters },
      holdTries: { ...state.holdTries },
    }));
  }
}

/**
 * A readiness check per consumer group: "ok" while it consumes; otherwise what it waits for (the
 * dependency its messages are held for, or Kafka while it subscribes). The service stays ready (it
 * serves its requests) and reports "degraded" meanwhile.
 */
export function consumerChecks(states: () => ConsumerState[], groups: string[]): HealthCheck[] {
  return groups.map((groupId) => ({
    name: `consumer ${groupId}`,
    check: async () => {
      const mine = states().filter((state) => state.groupId === groupId);
      const problems: string[] = [];
      for (const state of mine) {
        if (state.subscribing)
          problems.push(
            `not subscribed yet: waiting for kafka since ${new Date(state.subscribing.since).toISOString()} (${state.subscribing.reason})`,
          );
        for (const hold of state.holds)
          problems.push(
            `paused on ${hold.topic}: waiting for ${hold.dependency} since ${new Date(hold.since).toISOString()} (${hold.reason})`,
          );
      }
      if (problems.length > 0) throw new Error(problems.join('; '));
    },
  }));
}

// --- messages ---------------------------------------------------------------------------------

/**
 * A message's value as an event envelope, or a PoisonMessageError (thrown by the delivery, so the
 * message becomes a dead letter) when it is not JSON or not an envelope.
 */
export function decodeEnvelope(text: string | null | undefined): EventEnvelope | PoisonMessageError {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text ?? '');
  } catch {
    return new PoisonMessageError('the message is not JSON');
  }
  const envelope = eventEnvelopeSchema.safeParse(parsed);
  if (!envelope.success) return new PoisonMessageError('the message is not an event envelope (id, type, version, occurredAt, key, data)');
  return parsed as EventEnvelope;
}

/** The headers of a message written to the dead letters: its own, and why, where from and when. */
export function deadLetterHeaders(
  message: Pick<BusMessage, 'topic' | 'offset' | 'headers'>,
  groupId: string,
  failure: FailureKind,
  partition?: number,
): Record<string, string> {
  const own = Object.fromEntries(
    Object.entries(message.headers).filter(([name]) => !Object.values(REPLAY_HEADERS).includes(name as never)),
  );
  return {
    ...own,
    [DEAD_LETTER_HEADERS.group]: groupId,
    [DEAD_LETTER_HEADERS.error]: failure.reason,
    [DEAD_LETTER_HEADERS.kind]: failure.kind === 'poison' ? 'poison' : 'failed',
    [DEAD_LETTER_HEADERS.topic]: message.topic,
    [DEAD_LETTER_HEADERS.offset]: message.offset,
    ...(partition !== undefined ? { [DEAD_LETTER_HEADERS.partition]: String(partition) } : {}),
    [DEAD_LETTER_HEADERS.at]: new Date().toISOString(),
  };
}

export interface DeliverOptions {
  groupId: string;
  message: BusMessage;
  /** Runs the handler once (in the message's context); a decoding failure is thrown from here. */
  handle: () => Promise<void>;
  /** Writes the message to its topic's dead letters. */
  deadLetter: (failure: FailureKind) => Promise<void>;
  /**
   * Keeps the consumer a member of its group while it holds a message (Kafka's heartbeat). A
   * rejection (the group is rebalancing) ends the hold: the message is not committed, and comes
   * again to whichever member gets its partition.
   */
  keepAlive?: () => Promise<void>;
  /** Aborted when the consumer stops: the message is left uncommitted (thrown). */
  signal: AbortSignal;
  policy: DeliveryPolicy;
  state: ConsumerStateHandle;
  logger: Logger;
}

/** How often a held or long-running delivery keeps its group membership alive. */
const KEEP_ALIVE_MS = 3_000;

/**
 * Delivers one message under the policy. Answers what to do with its offset: commit it (handled,
 * dead-lettered, or a replay meant for another group). Throws when the consumer stops (or its
 * group rebalances) before the message was handled: it stays uncommitted and is delivered again.
 */
export async function deliverMessage(options: DeliverOptions): Promise<'handled' | 'dead-lettered' | 'skipped'> {
  const { message, groupId, policy, state, logger, signal } = options;
  const replayFor = message.headers[REPLAY_HEADERS.forGroup];
  if (replayFor !== undefined && replayFor !== groupId) return 'skipped';
  const where = { groupId, topic: message.topic, offset: message.offset, eventId: message.value?.id };
  let attempts = 0;
  let holds = 0;
  let heldSince = 0;
  for (;;) {
    try {
      await withKeepAlive(options.handle, options.keepAlive);
      if (holds > 0) {
        state.release(message.topic);
        logger.info({ ...where, heldMs: Date.now() - heldSince, tries: holds + 1 }, 'dependency answers again; the consumer goes on');
      }
      return 'handled';
    } catch (error) {
      if (signal.aborted) throw error;
      let failure = classifyFailure(error);
      if (failure.kind === 'unknown' && policy.dependencies?.length) {
        const away = await firstAway(policy.dependencies);
        if (away) failure = { kind: 'dependency', dependency: away, reason: failure.reason };
      }
      if (failure.kind === 'dependency') {
        holds++;
        state.hold(message.topic, failure.dependency, failure.reason);
        if (holds === 1) {
          heldSince = Date.now();
          logger.warn(
            { ...where, dependency: failure.dependency, reason: failure.reason },
            'dependency away: the consumer holds this message (and those after it) until it answers',
          );
        } else if (holds % 20 === 0) {
          logger.warn(
            { ...where, dependency: failure.dependency, reason: failure.reason, tries: holds, heldMs: Date.now() - heldSince },
            'still waiting for a dependency',
          );
        }
        await pause(backoffDelay(holds, policy.hold), signal, options.keepAlive, error);
        continue;
      }
      attempts++;
      if (failure.kind === 'poison' || attempts >= policy.maxAttempts) {
        logger.error(
          { ...where, err: error, kind: failure.kind, attempts },
          failure.kind === 'poison'
            ? 'poison message: sent to the dead-letter topic'
            : 'event handler failed for good; message sent to the dead-letter topic',
        );
        await options.deadLetter(failure);
        if (holds > 0) state.release(message.topic);
        state.deadLettered(message.topic);
        return 'dead-lettered';
      }
      logger.warn({ ...where, err: error, attempt: attempts }, 'event handler failed; retrying');
      await pause(policy.retryDelayMs * 2 ** (attempts - 1), signal, options.keepAlive, error);
    }
  }
}

/** The first dependency that does not answer its check, or null. */
async function firstAway(checks: HealthCheck[]): Promise<string | null> {
  for (const { name, check } of checks) {
    const answered = await Promise.race([
      check().then(
        () => true,
        () => false,
      ),
      sleep(2_000).then(() => false),
    ]);
    if (!answered) return name;
  }
  return null;
}

/** Runs the handler, keeping the group membership alive while it runs long (a slow dependency). */
async function withKeepAlive(run: () => Promise<void>, keepAlive?: () => Promise<void>): Promise<void> {
  if (!keepAlive) return run();
  const timer = setInterval(() => void keepAlive().catch(() => undefined), KEEP_ALIVE_MS);
  try {
    await run();
  } finally {
    clearInterval(timer);
  }
}

/** Waits `ms` in slices, keeping the membership alive between them; throws `error` when stopped. */
async function pause(ms: number, signal: AbortSignal, keepAlive: (() => Promise<void>) | undefined, error: unknown): Promise<void> {
  const end = Date.now() + ms;
  for (let left = ms; left > 0; left = end - Date.now()) {
    try {
      await sleep(Math.min(left, KEEP_ALIVE_MS), signal);
    } catch {
      throw error;
    }
    await keepAlive?.();
  }
}
