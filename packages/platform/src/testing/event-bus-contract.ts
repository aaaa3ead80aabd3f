import { randomUUID } from 'node:crypto';
import { afterEach, describe, expect, it } from 'vitest';
import type { EventBus, BusMessage, Subscription } from '../events/event-bus.js';
import { deadLetterTopic } from '../events/event-bus.js';
import { createEvent } from '../events/envelope.js';
import { REPLAY_HEADERS } from '../events/consumer-policy.js';
import { DependencyUnavailableError, PoisonMessageError } from '../resilience/failures.js';
import { currentRequestContext, runWithRequestContext, type RequestContext } from '../context/request-context.js';
import { waitFor } from './wait-for.js';

export interface EventBusContractOptions {
  /** A new client of the same underlying log each call (a "restart" opens a second one). */
  connect: () => Promise<EventBus>;
  /** Time allowed for a message to arrive (Kafka needs longer while it creates topics). */
  timeoutMs?: number;
  /** Writes a message with a value as given (not an event) to a topic of this bus's log. */
  writeRaw: (bus: EventBus, topic: string, key: string, value: string) => Promise<void>;
}

/**
 * The one contract every event bus adapter must pass. Topics and groups get random names, so the
 * suite can run against a shared broker.
 */
export function eventBusContract(name: string, options: EventBusContractOptions): void {
  const timeoutMs = options.timeoutMs ?? 10_000;
  describe(`EventBus contract: ${name}`, () => {
    const open: EventBus[] = [];
    const subscriptions: Subscription[] = [];
    const unique = (label: string) => `contract.${label}.${randomUUID().slice(0, 8)}`;
    const connect = async () => {
      const bus = await options.connect();
      open.push(bus);
      return bus;
    };
    const event = (key: string, n: number) => createEvent({ type: 'test.happened', key, data: { n } });
    const collect = async (bus: EventBus, topic: string, groupId: string, fromBeginning = true) => {
      const received: BusMessage[] = [];
      subscriptions.push(
        await bus.subscribe({ groupId, topics: [topic], fromBeginning, handler: async (message) => void received.push(message) }),
      );
      return received;
    };

    afterEach(async () => {
      for (const subscription of subscriptions.splice(0)) await subscription.close();
      for (const bus of open.splice(0)) await bus.close();
    });

    it('runs each handler in the context of the request its event was made in, and one without a request id in none', async () => {
      const bus = await connect();
      const topic = unique('context');
      const made = (requestId: string | undefined, n: number) =>
        requestId === undefined ? event('k', n) : runWithRequestContext({ requestId, caller: { kind: 'anonymous' } }, () => event('k', n));
      const seen: { n: number; context: RequestContext | undefined }[] = [];
      const groupId = unique('group');
      subscriptions.push(
        await bus.subscribe({
          groupId,
          topics: [topic],
          handler: async (message) => {
            await new Promise((resolve) => setTimeout(resolve, 5));
            seen.push({ n: (message.value.data as { n: number }).n, context: currentRequestContext() });
          },
        }),
      );
      const messages = [made('request-one', 1), made(undefined, 2), made('request-three', 3)].map((value) => ({ key: 'k', value }));
      // Published from inside another request's context (as a relay kicked by a request might): the handlers must not see it.
      await runWithRequestContext({ requestId: 'publisher', caller: { kind: 'anonymous' } }, () => bus.publish(topic, messages));
      await waitFor(() => seen.length === 3, { timeoutMs, what: '3 messages' });
      expect(seen.map(({ n, context }) => [n, context?.requestId])).toEqual([
        [1, 'request-one'],
        [2, undefined],
        [3, 'request-three'],
      ]);
      for (const { context } of seen) expect(context?.caller).toEqual({ kind: 'system', name: groupId });
    });

    it('delivers messages with their key, value and headers, in order per key', async () => {
      const bus = await connect();
      const topic = unique('order');
      await bus.publish(topic, [
        { key: 'a', value: event('a', 1), headers: { traceparent: '00-abc-def-01' } },
        { key: 'b', value: event('b', 1) },
      ]);
      await bus.publish(topic, [
        { key: 'a', value: event('a', 2) },
        { key: 'a', value: event('a', 3) },
      ]);
      const received = await collect(bus, topic, unique('group'));
      await waitFor(() => received.length === 4, { timeoutMs, what: '4 messages' });
      const ofA = received.filter((message) => message.key === 'a').map((message) => (message.value.data as { n: number }).n);
      expect(ofA).toEqual([1, 2, 3]);
      const first = received.find((message) => message.key === 'a')!;
      expect(first.topic).toBe(topic);
      expect(first.value.type).toBe('test.happened');
      expect(first.headers.traceparent).toBe('00-abc-def-01');
      expect(typeof first.offset).toBe('string');
    });

    it('gives every consumer group its own copy of every message', async () => {
      const bus = await connect();
      const topic = unique('fanout');
      const one = await collect(bus, topic, unique('group-one'));
      const two = await collect(bus, topic, unique('group-two'));
      await bus.publish(topic, [
        { key: 'k', value: event('k', 1) },
        { key: 'k', value: event('k', 2) },
      ]);
      await waitFor(() => one.length === 2 && two.length === 2, { timeoutMs, what: 'both groups' });
    });

    it('retries a failing handler and delivers the message again (at least once)', async () => {
      const bus = await connect();
      const topic = unique('retry');
      let attempts = 0;
      const handled: number[] = [];
      subscriptions.push(
        await bus.subscribe({
          groupId: unique('group'),
          topics: [topic],
          retryDelayMs: 10,
          handler: async (message) => {
            attempts++;
            if (attempts < 3) throw new Error('temporary failure');
            handled.push((message.value.data as { n: number }).n);
          },
        }),
      );
      await bus.publish(topic, [{ key: 'k', value: event('k', 7) }]);
      await waitFor(() => handled.length === 1, { timeoutMs, what: 'the retried message' });
      expect(attempts).toBe(3);
      expect(handled).toEqual([7]);
    });

    it('moves a message that keeps failing to the dead-letter topic and goes on', async () => {
      const bus = await connect();
      const topic = unique('poison');
      const handled: number[] = [];
      subscriptions.push(
        await bus.subscribe({
          groupId: unique('group'),
          topics: [topic],
          maxAttempts: 2,
          retryDelayMs: 10,
          handler: async (message) => {
            const n = (message.value.data as { n: number }).n;
            if (n === 1) throw new Error('poison message');
            handled.push(n);
          },
        }),
      );
      const deadLetters = await collect(bus, deadLetterTopic(topic), unique('dlq-reader'));
      await bus.publish(topic, [
        { key: 'k', value: event('k', 1) },
        { key: 'k', value: event('k', 2) },
      ]);
      await waitFor(() => handled.includes(2), { timeoutMs, what: 'the message after the poison one' });
      await waitFor(() => deadLetters.length === 1, { timeoutMs, what: 'the dead letter' });
      expect((deadLetters[0]!.value.data as { n: number }).n).toBe(1);
      expect(deadLetters[0]!.headers['x-dead-letter-error']).toContain('poison message');
    });

    it('holds a message whose dependency is away, and the messages after it, then goes on when it answers: no dead letter', async () => {
      const bus = await connect();
      const topic = unique('hold');
      const groupId = unique('group');
      let away = true;
      let tries = 0;
      const handled: number[] = [];
      subscriptions.push(
        await bus.subscribe({
          groupId,
          topics: [topic],
          maxAttempts: 2,
          retryDelayMs: 10,
          holdBackoff: { initialMs: 20, maxMs: 100 },
          handler: async (message) => {
            const n = (message.value.data as { n: number }).n;
            if (n === 1) tries++;
            if (away) throw new DependencyUnavailableError('mongodb', 'connect ECONNREFUSED 127.0.0.1:27017');
            handled.push(n);
          },
        }),
      );
      const deadLetters = await collect(bus, deadLetterTopic(topic), unique('dlq-reader'));
      await bus.publish(topic, [
        { key: 'k', value: event('k', 1) },
        { key: 'k', value: event('k', 2) },
      ]);
      // Far more tries than maxAttempts, and the group says what it waits for.
      await waitFor(() => tries >= 5, { timeoutMs, what: 'the held message to be tried again and again' });
      const held = bus.consumerStates().find((state) => state.groupId === groupId)!;
      expect(held.holds).toEqual([expect.objectContaining({ topic, dependency: 'mongodb' })]);
      expect(handled).toEqual([]);
      away = false;
      await waitFor(() => handled.length === 2, { timeoutMs, what: 'both messages once the dependency answers' });
      expect(handled).toEqual([1, 2]);
      expect(bus.consumerStates().find((state) => state.groupId === groupId)!.holds).toEqual([]);
      await new Promise((resolve) => setTimeout(resolve, 500));
      expect(deadLetters).toEqual([]);
    });

    it("takes a failure it does not recognise for a dependency's while one of the dependencies it was given does not answer", async () => {
      const bus = await connect();
      const topic = unique('probe');
      const groupId = unique('group');
      let storeUp = false;
      let tries = 0;
      const handled: number[] = [];
      subscriptions.push(
        await bus.subscribe({
          groupId,
          topics: [topic],
          maxAttempts: 2,
          retryDelayMs: 10,
          holdBackoff: { initialMs: 20, maxMs: 100 },
          dependencies: [
            {
              name: 'store',
              check: async () => {
                if (!storeUp) throw new Error('down');
              },
            },
          ],
          handler: async (message) => {
            tries++;
            if (!storeUp) throw new Error('something the classifier does not know');
            handled.push((message.value.data as { n: number }).n);
          },
        }),
      );
      const deadLetters = await collect(bus, deadLetterTopic(topic), unique('dlq-reader'));
      await bus.publish(topic, [{ key: 'k', value: event('k', 1) }]);
      await waitFor(() => tries >= 4, { timeoutMs, what: 'tries past maxAttempts' });
      expect(bus.consumerStates().find((state) => state.groupId === groupId)!.holds).toEqual([
        expect.objectContaining({ topic, dependency: 'store' }),
      ]);
      storeUp = true;
      await waitFor(() => handled.length === 1, { timeoutMs, what: 'the message once the store answers' });
      await new Promise((resolve) => setTimeout(resolve, 500));
      expect(deadLetters).toEqual([]);
    });

    it('sends a poison message to the dead letters at once, saying why and for which group, and counts it', async () => {
      const bus = await connect();
      const topic = unique('poisoned');
      const groupId = unique('group');
      const tries: number[] = [];
      subscriptions.push(
        await bus.subscribe({
          groupId,
          topics: [topic],
          retryDelayMs: 10,
          handler: async (message) => {
            const n = (message.value.data as { n: number }).n;
            tries.push(n);
            if (n === 1) throw new PoisonMessageError('the appointment has no start');
          },
        }),
      );
      const deadLetters = await collect(bus, deadLetterTopic(topic), unique('dlq-reader'));
      await bus.publish(topic, [
        { key: 'k', value: event('k', 1) },
        { key: 'k', value: event('k', 2) },
      ]);
      await waitFor(() => deadLetters.length === 1 && tries.includes(2), { timeoutMs, what: 'the dead letter and the next message' });
      expect(tries).toEqual([1, 2]);
      const [letter] = deadLetters;
      expect((letter!.value.data as { n: number }).n).toBe(1);
      expect(letter!.headers['x-dead-letter-kind']).toBe('poison');
      expect(letter!.headers['x-dead-letter-group']).toBe(groupId);
      expect(letter!.headers['x-dead-letter-topic']).toBe(topic);
      expect(letter!.headers['x-dead-letter-error']).toContain('the appointment has no start');
      expect(bus.consumerStates().find((state) => state.groupId === groupId)!.deadLetters).toEqual({ [topic]: 1 });
    });

    it('sends a message whose value is no event to the dead letters, and goes on', async () => {
      const bus = await connect();
      const topic = unique('garbled');
      const groupId = unique('group');
      const handled: number[] = [];
      subscriptions.push(
        await bus.subscribe({
          groupId,
          topics: [topic],
          handler: async (message) => void handled.push((message.value.data as { n: number }).n),
        }),
      );
      await options.writeRaw(bus, topic, 'k', '{"not": "an event"');
      await options.writeRaw(bus, topic, 'k', '{"not": "an event either"}');
      await bus.publish(topic, [{ key: 'k', value: event('k', 3) }]);
      await waitFor(() => handled.includes(3), { timeoutMs, what: 'the message after the malformed ones' });
      expect(handled).toEqual([3]);
      expect(bus.consumerStates().find((state) => state.groupId === groupId)!.deadLetters).toEqual({ [topic]: 2 });
    });

    it('gives a dead letter replayed for one group to that group alone', async () => {
      const bus = await connect();
      const topic = unique('replay');
      const one = await collect(bus, topic, unique('group-one'));
      const twoId = unique('group-two');
      const two = await collect(bus, topic, twoId);
      await bus.publish(topic, [{ key: 'k', value: event('k', 1), headers: { [REPLAY_HEADERS.forGroup]: twoId } }]);
      await bus.publish(topic, [{ key: 'k', value: event('k', 2) }]);
      await waitFor(() => one.length === 1 && two.length === 2, { timeoutMs, what: 'the replay to reach its group only' });
      expect(one.map((message) => (message.value.data as { n: number }).n)).toEqual([2]);
      expect(two.map((message) => (message.value.data as { n: number }).n)).toEqual([1, 2]);
    });

    it('resumes a group after a restart from where it committed, losing nothing', async () => {
      const topic = unique('resume');
      const groupId = unique('group');
      const first = await connect();
      const seen: number[] = [];
      const subscription = await first.subscribe({
        groupId,
        topics: [topic],
        handler: async (message) => void seen.push((message.value.data as { n: number }).n),
      });
      await first.publish(topic, [
        { key: 'k', value: event('k', 1) },
        { key: 'k', value: event('k', 2) },
      ]);
      await waitFor(() => seen.length === 2, { timeoutMs, what: 'first two messages' });
      await subscription.close();
      await first.publish(topic, [{ key: 'k', value: event('k', 3) }]);
      await first.close();
      open.splice(open.indexOf(first), 1);

      const second = await connect();
      const after = await collect(second, topic, groupId);
      await waitFor(() => after.some((message) => (message.value.data as { n: number }).n === 3), {
        timeoutMs,
        what: 'the message published while the group was away',
      });
      // At least once: 1 and 2 were committed, so they must not come back; 3 must.
      expect(after.map((message) => (message.value.data as { n: number }).n)).toEqual([3]);
    });

    it('starts a new group at the end when asked not to read from the beginning', async () => {
      const bus = await connect();
      const topic = unique('latest');
      await bus.publish(topic, [{ key: 'k', value: event('k', 1) }]);
      // Make sure the old message is really in the log before the late group joins.
      const early = await collect(bus, topic, unique('early'));
      await waitFor(() => early.length === 1, { timeoutMs, what: 'the old message' });
      const late = await collect(bus, topic, unique('late'), false);
      await new Promise((resolve) => setTimeout(resolve, 300));
      await bus.publish(topic, [{ key: 'k', value: event('k', 2) }]);
      await waitFor(() => late.length >= 1, { timeoutMs, what: 'the new message' });
      expect(late.map((message) => (message.value.data as { n: number }).n)).toEqual([2]);
    });

    it("tells a group's lag: what is published and not yet handled", async () => {
      const bus = await connect();
      const topic = unique('lag');
      const groupId = unique('group');
      await bus.publish(topic, [
        { key: 'k', value: event('k', 1) },
        { key: 'k', value: event('k', 2) },
      ]);
      // Kafka: the admin client may not know the new topic's partitions at once (its offsets then
      // count as none); it tells 2 once it has them.
      await waitFor(async () => (await bus.lag(groupId, [topic]))[topic] === 2, { timeoutMs, what: 'the lag to be 2' });
      const received = await collect(bus, topic, groupId);
      await waitFor(() => received.length === 2, { timeoutMs, what: 'both messages' });
      await waitFor(async () => (await bus.lag(groupId, [topic]))[topic] === 0, { timeoutMs, what: 'the lag to reach 0' });
    });

    it('answers ping while open', async () => {
      const bus = await connect();
      await expect(bus.ping()).resolves.toBeUndefined();
    });
  });
}
