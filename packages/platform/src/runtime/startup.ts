import { createServer, type RequestListener, type Server } from 'node:http';
import { once } from 'node:events';
import type { AddressInfo } from 'node:net';
import type { Logger } from 'pino';
import type { Subscription } from '../events/event-bus.js';
import { answerHealth, type HealthCheck } from './health-server.js';

/**
 * A process's start-up as readiness sees it: until started, /readyz answers 503 "starting" with
 * what it waits for (a dependency away: the stores cannot be opened yet); /healthz answers 200 all
 * along, so the orchestrator never restarts a process that only waits. No crash-loop while a
 * dependency is away: the process listens first and connects in the background, with back-off.
 */
export class StartupGate {
  private waiting = 'starting';
  private done = false;

  /** The readiness check that holds the process out of service until it has started. */
  readonly check: HealthCheck = {
    name: 'start',
    gate: true,
    check: async () => {
      if (!this.done) throw new Error(this.waiting);
    },
  };

  waitingFor(what: string): void {
    this.waiting = what;
  }

  started(): void {
    this.done = true;
  }

  get isStarted(): boolean {
    return this.done;
  }
}

export interface ListeningFirst {
  server: Server;
  port: number;
  /** From now on every request goes to the service's own handler. */
  serve(handler: RequestListener): void;
}

/**
 * Listens at once, before the service's stores are open: /healthz and /readyz (503 "starting",
 * naming what start-up waits for) are answered, and every other request gets a 503 with
 * Retry-After, until serve() hands the server to the service's own handler.
 */
export async function listenFirst(options: {
  port: number;
  host: string;
  gate: StartupGate;
  logger: Logger;
  checks?: HealthCheck[];
}): Promise<ListeningFirst> {
  const checks = [options.gate.check, ...(options.checks ?? [])];
  let handler: RequestListener | null = null;
  const server = createServer((req, res) => {
    if (handler) return handler(req, res);
    if (answerHealth(req, res, checks)) return;
    res
      .writeHead(503, { 'content-type': 'application/json', 'retry-after': '5' })
      .end(JSON.stringify({ code: 'unavailable', message: 'The service is starting. Please try again in a moment.' }));
  });
  server.listen(options.port, options.host);
  await once(server, 'listening');
  const { port } = server.address() as AddressInfo;
  options.logger.info({ port }, 'listening; starting');
  return {
    server,
    port,
    serve: (next) => {
      handler = next;
    },
  };
}

/**
 * Subscriptions made in the background: a service starts serving while Kafka is away, and its
 * consumers join once it answers (EventBus.subscribe keeps trying). close() stops those still
 * trying and closes those made.
 */
export class BackgroundSubscriptions {
  private readonly stop = new AbortController();
  private readonly made: Subscription[] = [];
  private readonly pending = new Set<Promise<void>>();

  constructor(private readonly logger: Logger) {}

  start(subscribe: (signal: AbortSignal) => Promise<Subscription | Subscription[]>): void {
    const task = subscribe(this.stop.signal).then(
      (made) => {
        const list = Array.isArray(made) ? made : [made];
        if (this.stop.signal.aborted) return Promise.all(list.map((subscription) => subscription.close())).then(() => undefined);
        this.made.push(...list);
      },
      (error: unknown) => {
        if (!this.stop.signal.aborted) this.logger.error({ err: error }, 'a consumer could not subscribe');
      },
    );
    this.pending.add(task);
    void task.finally(() => this.pending.delete(task));
  }

  async close(): Promise<void> {
    this.stop.abort(new Error('stopping'));
    await Promise.all([...this.pending]);
    for (const subscription of this.made.splice(0)) await subscription.close();
  }
}
