import type { EventEnvelope } from '@portal/contracts';
import type { Logger } from 'pino';
import type { EventBus } from './event-bus.js';
import { outsideRequestContext } from '../context/request-context.js';
import { TimeSlices } from '../runtime/time-slices.js';

export interface OutboxEntry {
  id: string;
  topic: string;
  event: EventEnvelope;
}

/**
 * Where a service keeps events that were committed together with its state change but are not
 * yet on the bus (the transactional outbox). Each repository adapter implements it next to its
 * own data, so that the state change and its events are written atomically.
 */
export interface OutboxStore {
  /** Oldest first. */
  pending(limit: number): Promise<OutboxEntry[]>;
  markPublished(ids: string[]): Promise<void>;
}

export interface OutboxRelayOptions {
  store: OutboxStore;
  bus: EventBus;
  logger: Logger;
  /** How often to look for entries nobody kicked the relay for (ms). */
  intervalMs?: number;
  batchSize?: number;
}

/**
 * Moves committed events from the outbox to the bus. A crash between the commit and the publish
 * only delays the events: they are still in the outbox and the next pass publishes them. An entry
 * is removed only after the bus accepted it, so delivery is at least once.
 */
export class OutboxRelay {
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<void> | undefined;
  private again = false;
  private stopped = false;

  constructor(private readonly options: OutboxRelayOptions) {}

  start(): void {
    this.stopped = false;
    this.timer = setInterval(() => this.kick(), this.options.intervalMs ?? 1000);
    this.timer.unref();
    this.kick();
  }

  /** Publish pending events now (called right after a commit). */
  kick(): void {
    if (this.stopped) return;
    if (this.running) {
      this.again = true;
      return;
    }
    // A pass publishes what many requests committed: it runs in none of their contexts.
    this.running = outsideRequestContext(() =>
      this.drain()
        .catch((error: unknown) => this.options.logger.warn({ err: error }, 'outbox relay pass failed; will retry'))
        .finally(() => {
          this.running = undefined;
          if (this.again) {
            this.again = false;
            this.kick();
          }
        }),
    );
  }

  /** Resolves once everything committed so far has been published (used by tests and shutdown). */
  async flush(): Promise<void> {
    while (this.running) await this.running;
    await this.drain();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearInterval(this.timer);
    await this.running;
  }

  private async drain(): Promise<void> {
    const batchSize = this.options.batchSize ?? 100;
    // The embedded stores answer at once (their awaits are microtasks): thousands of events
    // written together (a box office's import) would hold the event loop until all are out.
    // In slices, every other request is answered between two.
    const slices = new TimeSlices();
    for (;;) {
      const entries = await this.options.store.pending(batchSize);
      if (entries.length === 0) return;
      // One at a time, in commit order, so that a failure leaves the rest for the next pass.
      for (const entry of entries) {
        await this.options.bus.publish(entry.topic, [{ key: entry.event.key, value: entry.event }]);
        await this.options.store.markPublished([entry.id]);
        await slices.maybeYield();
      }
      if (entries.length < batchSize) return;
    }
  }
}
