import type { RequestHandler } from 'express';
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';
import { RetryJobLaterError, type JobQueue, type JobHandler } from '../jobs/job-queue.js';
import type { EventBus } from '../events/event-bus.js';
import { runReadinessChecks, type HealthCheck } from '../runtime/health-server.js';

const LATENCY_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30];
const JOB_BUCKETS = [0.1, 0.5, 1, 2, 5, 10, 30, 60, 120, 300, 600];

/**
 * One service's Prometheus metrics (prom-client): process and event-loop metrics, HTTP latency by
 * route, job queue depth and job durations, consumer lag, and counters the service adds.
 */
export class ServiceMetrics {
  readonly registry = new Registry();
  private readonly httpDuration: Histogram<'method' | 'route' | 'status'>;
  private readonly jobDuration: Histogram<'queue' | 'outcome'>;
  private readonly counters = new Map<string, Counter<string>>();
  private readonly dependencyChecks: HealthCheck[] = [];
  /** The queues whose oldest waiting job portal_job_oldest_waiting_seconds reports. */
  private readonly waitingQueues: JobQueue<any>[] = [];
  /** The consumer groups (and their topics) portal_consumer_lag reports. */
  private readonly lagGroups: { bus: EventBus; groupId: string; topics: string[] }[] = [];

  constructor(readonly service: string) {
    this.registry.setDefaultLabels({ service });
    collectDefaultMetrics({ register: this.registry });
    this.httpDuration = new Histogram({
      name: 'portal_http_request_duration_seconds',
      help: 'Time to answer HTTP requests, by route template and status',
      labelNames: ['method', 'route', 'status'],
      buckets: LATENCY_BUCKETS,
      registers: [this.registry],
    });
    this.jobDuration = new Histogram({
      name: 'portal_job_duration_seconds',
      help: 'Time a job took, by queue and outcome',
      labelNames: ['queue', 'outcome'],
      buckets: JOB_BUCKETS,
      registers: [this.registry],
    });
  }

  /**
   * The histogram's series for each method, route and status seen. prom-client would otherwise
   * turn the labels into its series key on every request (a sort and a join), a cost that showed
   * in the gateway's profile; routes are templates, so the set stays small.
   */
  private readonly httpSeries = new Map<string, { observe(seconds: number): void }>();

  /** Records one answered request. The route is the template (/api/user/:id), never the raw path. */
  observeRequest(method: string, route: string, status: number, seconds: number): void {
    const key = `${method} ${status} ${route}`;
    let series = this.httpSeries.get(key);
    if (series === undefined) {
      series = this.httpDuration.labels({ method, route, status: String(status) });
      this.httpSeries.set(key, series);
    }
    series.observe(seconds);
  }

  /** Express middleware recording every request's latency. */
  expressMiddleware(): RequestHandler {
    return (req, res, next) => {
      const start = process.hrtime.bigint();
      res.on('finish', () => {
        const route = req.route ? `${req.baseUrl}${String(req.route.path)}` : 'unmatched';
        this.observeRequest(req.method, route, res.statusCode, Number(process.hrtime.bigint() - start) / 1e9);
      });
      next();
    };
  }

  /**
   * Queue depth by state (portal_jobs_<queue>{state}), and how long the queue's oldest waiting
   * job has been due (portal_job_oldest_waiting_seconds{queue}, 0 when none waits), read from the
   * queue when Prometheus scrapes. A queue that no worker takes shows no depth change at first
   * (nothing done, nothing added), but its oldest job's age grows.
   */
  watchQueue(queue: JobQueue<any>): void {
    const name = `portal_jobs_${queue.name.replace(/[^a-zA-Z0-9_]/g, '_')}`;
    new Gauge({
      name,
      help: `Jobs of the ${queue.name} queue by state`,
      labelNames: ['state'],
      registers: [this.registry],
      async collect() {
        const counts = await queue.counts().catch(() => null);
        if (!counts) return;
        for (const [state, count] of Object.entries(counts)) this.set({ state }, count);
      },
    });
    this.waitingQueues.push(queue);
    if (this.waitingQueues.length > 1) return;
    const queues = this.waitingQueues;
    new Gauge({
      name: 'portal_job_oldest_waiting_seconds',
      help: "Seconds since the queue's oldest waiting job was due (0: none waits)",
      labelNames: ['queue'],
      registers: [this.registry],
      async collect() {
        await Promise.all(
          queues.map(async (watched) => {
            const since = await watched.oldestWaitingSince().catch(() => undefined);
            if (since === undefined) return this.remove({ queue: watched.name });
            this.set({ queue: watched.name }, since === null ? 0 : Math.max(0, (Date.now() - since) / 1000));
          }),
        );
      },
    });
  }

  /** Wraps a job handler so that its duration and outcome (completed, failed, or postponed while a dependency is away) are recorded. */
  timeJobs<T>(queue: string, handler: JobHandler<T>): JobHandler<T> {
    return async (job) => {
      const end = this.jobDuration.startTimer({ queue });
      try {
        const result = await handler(job);
        end({ outcome: 'completed' });
        return result;
      } catch (error) {
        end({ outcome: error instanceof RetryJobLaterError ? 'postponed' : 'failed' });
        throw error;
      }
    };
  }

  /**
   * portal_consumer_lag{group, topic}: messages a consumer group has not handled yet, every group
   * of the process in one metric, read at scrape time (one alert covers every group, those added
   * later included). A topic whose lag cannot be read (Kafka away) has no sample meanwhile.
   */
  watchConsumerLag(bus: EventBus, groupId: string, topics: string[]): void {
    this.lagGroups.push({ bus, groupId, topics });
    if (this.lagGroups.length > 1) return;
    const groups = this.lagGroups;
    new Gauge({
      name: 'portal_consumer_lag',
      help: 'Messages not yet handled by a consumer group, by group and topic',
      labelNames: ['group', 'topic'],
      registers: [this.registry],
      async collect() {
        this.reset();
        await Promise.all(
          groups.map(async ({ bus: groupBus, groupId: group, topics: groupTopics }) => {
            const lag = await groupBus.lag(group, groupTopics).catch(() => null);
            if (!lag) return;
            for (const [topic, value] of Object.entries(lag)) this.set({ group, topic }, value);
          }),
        );
      },
    });
  }

  /**
   * What this process's consumer groups are doing, read at scrape time from the bus client:
   * `portal_consumer_paused{group, topic}` is 1 while the group holds that topic's messages because
   * a dependency is away (0 otherwise), `portal_event_dead_letters_total{topic, group}` counts
   * the messages it wrote to the topic's dead letters (from 0 for every topic it reads), and
   * `portal_consumer_hold_retries_total{group, topic}` the tries that failed while it held one.
   */
  watchConsumers(bus: Pick<EventBus, 'consumerStates'>, groups: string[]): void {
    const mine = () => bus.consumerStates().filter((state) => groups.includes(state.groupId));
    new Gauge({
      name: 'portal_consumer_paused',
      help: 'Whether a consumer group holds the messages of a topic because a dependency is away (1) or not (0)',
      labelNames: ['group', 'topic'],
      registers: [this.registry],
      collect() {
        this.reset();
        for (const state of mine()) {
          for (const topic of state.topics) {
            this.set({ group: state.groupId, topic }, state.holds.some((hold) => hold.topic === topic) ? 1 : 0);
          }
        }
      },
    });
    new Counter({
      name: 'portal_consumer_hold_retries_total',
      help: 'Tries of a held message that failed because its dependency was still away, by group and topic',
      labelNames: ['group', 'topic'],
      registers: [this.registry],
      collect() {
        this.reset();
        for (const state of mine()) {
          for (const topic of state.topics) this.inc({ group: state.groupId, topic }, state.holdTries[topic] ?? 0);
        }
      },
    });
    new Counter({
      name: 'portal_event_dead_letters_total',
      help: 'Messages a consumer group wrote to a dead-letter topic (poison, or failing for no recognised reason), by original topic',
      labelNames: ['topic', 'group'],
      registers: [this.registry],
      collect() {
        this.reset();
        for (const state of mine()) {
          for (const topic of state.topics) this.inc({ topic, group: state.groupId }, state.deadLetters[topic] ?? 0);
        }
      },
    });
  }

  /**
   * portal_dependency_up{dependency}: 1 when a dependency of the readiness checks (Kafka, MongoDB,
   * Redis, S3, the mail server, a neighbouring service) answers within the readiness timeout, 0
   * when it does not, asked at scrape time. /readyz stays 200 while one is away ("degraded" in its
   * body, docs/OPERATIONS.md), so this is how an alert sees a degraded dependency.
   */
  watchDependencies(given: HealthCheck[]): void {
    // A start-up gate (StartupGate) is no dependency.
    const checks = given.filter((check) => !check.gate);
    if (checks.length === 0) return;
    const first = this.dependencyChecks.length === 0;
    this.dependencyChecks.push(...checks);
    if (!first) return;
    const all = this.dependencyChecks;
    new Gauge({
      name: 'portal_dependency_up',
      help: 'Whether a dependency answered the readiness check (1) or not (0), asked at scrape time',
      labelNames: ['dependency'],
      registers: [this.registry],
      async collect() {
        const { body } = await runReadinessChecks(all, false);
        for (const [dependency, state] of Object.entries(body.checks)) this.set({ dependency }, state === 'ok' ? 1 : 0);
      },
    });
  }

  /** A counter of this service (created once, by name). */
  counter(name: string, help: string, labelNames: string[] = []): Counter<string> {
    let counter = this.counters.get(name);
    if (!counter) {
      counter = new Counter({ name, help, labelNames, registers: [this.registry] });
      this.counters.set(name, counter);
    }
    return counter;
  }

  /** A gauge of this service whose values are read at scrape time (`collect` sets them). */
  gauge(
    name: string,
    help: string,
    labelNames: string[],
    collect: (set: (labels: Record<string, string>, value: number) => void) => Promise<void>,
  ): void {
    new Gauge({
      name,
      help,
      labelNames,
      registers: [this.registry],
      async collect() {
        await collect((labels, value) => this.set(labels, value));
      },
    });
  }

  contentType(): string {
    return this.registry.contentType;
  }

  text(): Promise<string> {
    return this.registry.metrics();
  }
}
