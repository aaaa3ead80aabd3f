import { DelayedError, Queue, UnrecoverableError, Worker, type ConnectionOptions, type Job } from 'bullmq';
import type { Logger } from 'pino';
import { continueWork, currentWorkOrigin } from '../context/continue-work.js';
import { classifyFailure } from '../resilience/failures.js';
import {
  DEFAULT_FREE_HAND_BACKS,
  JobFailedForGoodError,
  RetryJobLaterError,
  handedBackTooOftenReason,
  type ActiveJob,
  type JobHandler,
  type JobInfo,
  type JobOptions,
  type JobQueue,
  type JobState,
  type JobWorker,
  type WorkOptions,
} from './job-queue.js';

export interface BullMqJobQueueOptions {
  queue: string;
  /** Redis URL, e.g. redis://redis:6379. */
  redisUrl: string;
  logger: Logger;
  /** Key prefix in Redis, so that deployments can share a server. */
  prefix?: string;
  /** Completed jobs are removed after this long (ms; default 1 day). Failed jobs are kept. */
  keepCompletedMs?: number;
}

function connectionFor(url: string): ConnectionOptions {
  const parsed = new URL(url);
  return {
    host: parsed.hostname,
    port: Number(parsed.port || 6379),
    ...(parsed.username ? { username: decodeURIComponent(parsed.username) } : {}),
    ...(parsed.password ? { password: decodeURIComponent(parsed.password) } : {}),
    ...(parsed.pathname.length > 1 ? { db: Number(parsed.pathname.slice(1)) } : {}),
    ...(parsed.protocol === 'rediss:' ? { tls: {} } : {}),
    // BullMQ workers block on Redis; they must not give up on a slow command.
    maxRetriesPerRequest: null,
  };
}

const TRACE_KEY = '__traceparent';
const REQUEST_KEY = '__requestId';
/** The field of a job's hash (beside BullMQ's own) counting its hand-backs. */
const HAND_BACKS_FIELD = 'portalHandBacks';
/** The field counting the times a job was put off (RetryJobLaterError), and the last reason. */
const POSTPONEMENTS_FIELD = 'portalPostponements';
const POSTPONED_REASON_FIELD = 'portalPostponedReason';

/**
 * `state` must be read BEFORE the job's hash: a job that finishes between the two reads would
 * otherwise show as completed without its return value (BullMQ writes the value and moves the job
 * in one script, so a state read first never runs ahead of the data read after it).
 */
async function toInfo<T>(job: Job<T>, state: string): Promise<JobInfo<T>> {
  const { [TRACE_KEY]: _trace, [REQUEST_KEY]: _request, ...data } = (job.data ?? {}) as Record<string, unknown>;
  const mapped: JobState = state === 'completed' || state === 'failed' || state === 'active' || state === 'delayed' ? state : 'waiting';
  return {
    id: job.id!,
    name: job.name,
    data: data as T,
    state: mapped,
    attemptsMade: job.attemptsMade,
    progress: typeof job.progress === 'number' ? job.progress : 0,
    failedReason: job.failedReason || null,
    returnValue: job.returnvalue ?? undefined,
  };
}

/** The job queue on BullMQ (Redis): the distributed adapter of the JobQueue port. */
export class BullMqJobQueue<T = unknown> implements JobQueue<T> {
  readonly name: string;
  private readonly queue: Queue<T>;
  private readonly workers = new Set<Worker<T>>();
  private readonly connection: ConnectionOptions;

  constructor(private readonly options: BullMqJobQueueOptions) {
    this.name = options.queue;
    this.connection = connectionFor(options.redisUrl);
    // The producer's side fails fast while Redis is away (a few reconnection tries), so that the
    // caller (a consumer) sees a dependency away and holds its message, instead of a call that
    // waits for ever; the workers' connections wait (BullMQ needs that of them).
    this.queue = new Queue<T>(options.queue, {
      connection: { ...(this.connection as object), maxRetriesPerRequest: 3 } as ConnectionOptions,
      prefix: options.prefix ?? 'portal',
    });
  }

  async add(name: string, data: T, options: JobOptions = {}): Promise<JobInfo<T>> {
    // The trace and the request id travel in the job's data under reserved keys, removed before the handler sees it.
    const { traceparent, requestId } = currentWorkOrigin();
    const payload =
      traceparent || requestId
        ? { ...(data as object), ...(traceparent ? { [TRACE_KEY]: traceparent } : {}), ...(requestId ? { [REQUEST_KEY]: requestId } : {}) }
        : data;
    const job = await this.queue.add(name as never, payload as never, {
      ...(options.jobId ? { jobId: options.jobId } : {}),
      attempts: Math.max(1, options.attempts ?? 3),
      backoff: { type: options.backoff?.type ?? 'exponential', delay: options.backoff?.delay ?? 1000 },
      ...(options.delay ? { delay: options.delay } : {}),
      removeOnComplete: { age: Math.round((this.options.keepCompletedMs ?? 24 * 3600_000) / 1000) },
      removeOnFail: false,
    });
    return toInfo(job as Job<T>, await job.getState());
  }

  async getJob(id: string): Promise<JobInfo<T> | null> {
    const state = await this.queue.getJobState(id);
    if (state === 'unknown') return null;
    const job = await this.queue.getJob(id);
    return job ? toInfo(job as Job<T>, state) : null;
  }

  async counts(): Promise<Record<JobState, number>> {
    const counts = await this.queue.getJobCounts('waiting', 'delayed', 'active', 'completed', 'failed', 'prioritized');
    return {
      waiting: (counts.waiting ?? 0) + (counts.prioritized ?? 0),
      delayed: counts.delayed ?? 0,
      active: counts.active ?? 0,
      completed: counts.completed ?? 0,
      failed: counts.failed ?? 0,
    };
  }

  async oldestWaitingSince(): Promise<number | null> {
    // The wait list is first in, first out: its oldest end is the job taken next. Prioritized
    // jobs (none in the portal today) would wait in a set of their own, ordered by priority.
    // A delayed job whose time has come waits in the delayed set until a worker moves it: with
    // no worker running it would never be counted. Its score there is its due time (ms × 4096).
    const dueSince = (job: Job<T>) => job.timestamp + (job.opts.delay ?? 0);
    const [[waiting], [delayed]] = await Promise.all([
      this.queue.getJobs(['wait'], 0, 0, true),
      this.queue.getJobs(['delayed'], 0, 0, true),
    ]);
    const candidates = waiting ? [dueSince(waiting as Job<T>)] : [];
    if (delayed?.id) {
      const score = await (await this.queue.client).zscore(this.queue.keys.delayed!, delayed.id);
      if (score !== null && Math.floor(Number(score) / 0x1000) <= Date.now()) candidates.push(dueSince(delayed as Job<T>));
    }
    return candidates.length ? Math.min(...candidates) : null;
  }

  async work(handler: JobHandler<T>, options: WorkOptions = {}): Promise<JobWorker> {
    const lockDuration = options.lockDurationMs ?? 30_000;
    const freeHandBacks = Math.max(0, options.freeHandBacks ?? DEFAULT_FREE_HAND_BACKS);
    // The running jobs with their lock tokens, to hand them back (handBack).
    const running = new Map<string, { job: Job<T>; token: string | undefined }>();
    const worker = new Worker<T>(
      this.options.queue,
      async (job, token) => {
        running.set(job.id!, { job, token });
        const { [TRACE_KEY]: traceparent, [REQUEST_KEY]: requestId, ...data } = (job.data ?? {}) as Record<string, unknown>;
        const redis = await this.queue.client;
        const key = this.queue.toKey(job.id!);
        const active: ActiveJob<T> = {
          id: job.id!,
          name: job.name,
          data: data as T,
          attemptsMade: job.attemptsMade,
          postponements: Number((await redis.hget(key, POSTPONEMENTS_FIELD)) ?? 0),
          updateProgress: (progress) => job.updateProgress(progress),
        };
        try {
          return await continueWork(
            {
              traceparent: typeof traceparent === 'string' ? traceparent : undefined,
              requestId: typeof requestId === 'string' ? requestId : undefined,
            },
            { handler: this.name, span: `${this.name} job`, attributes: { 'job.id': job.id ?? '' } },
            () => handler(active),
          );
        } catch (error) {
          if (error instanceof RetryJobLaterError) {
            // Delayed again with no try counted (BullMQ's documented way: moveToDelayed, then DelayedError).
            await redis.hset(key, {
              [POSTPONEMENTS_FIELD]: active.postponements + 1,
              [POSTPONED_REASON_FIELD]: error.message.slice(0, 500),
            });
            await job.moveToDelayed(Date.now() + Math.max(0, error.delayMs), token);
            throw new DelayedError();
          }
          if (error instanceof JobFailedForGoodError) throw new UnrecoverableError(error.message);
          throw error;
        } finally {
          running.delete(job.id!);
        }
      },
      {
        connection: this.connection,
        prefix: this.options.prefix ?? 'portal',
        concurrency: Math.max(1, options.concurrency ?? 1),
        lockDuration,
        // A job whose worker died is looked for this often and handed to another worker.
        stalledInterval: Math.max(250, Math.round(lockDuration / 2)),
        maxStalledCount: 2,
      },
    );
    worker.on('failed', (job, error) => {
      this.options.logger.warn({ jobId: job?.id, queue: this.name, err: error }, 'job failed');
    });
    // While Redis is away the worker says so on every reconnection try: a warning (its jobs wait), not an error.
    worker.on('error', (error) =>
      this.options.logger[classifyFailure(error).kind === 'dependency' ? 'warn' : 'error'](
        { err: error, queue: this.name },
        'job worker error',
      ),
    );
    this.workers.add(worker);
    await worker.waitUntilReady();
    return {
      close: async () => {
        this.workers.delete(worker);
        await worker.close();
      },
      handBack: async () => {
        this.workers.delete(worker);
        const handedBack: string[] = [];
        const redis = await this.queue.client;
        for (const { job, token } of [...running.values()]) {
          // Only the worker holding the job's lock hands it back: no other writer of the count.
          const key = this.queue.toKey(job.id!);
          const handBacks = Number((await redis.hget(key, HAND_BACKS_FIELD)) ?? 0) + 1;
          await redis.hset(key, { [HAND_BACKS_FIELD]: handBacks });
          if (handBacks > freeHandBacks) {
            // A failed try, as if its handler had thrown (failed for good after the last), but
            // waiting again at once: the job did nothing wrong, its worker went away.
            await job.moveToFailed(new Error(handedBackTooOftenReason(handBacks)), token ?? '');
            if ((await job.getState()) === 'delayed') await job.promote();
            this.options.logger.warn(
              { jobId: job.id, queue: this.name, handBacks },
              'job handed back too often: the hand-back counts as a try',
            );
          } else {
            // Back to the waiting list, its lock released; attemptsMade is not increased.
            await job.moveToWait(token);
          }
          handedBack.push(job.id!);
        }
        running.clear();
        // force: do not wait for the handlers of the jobs just handed back.
        await worker.close(true);
        return handedBack;
      },
    };
  }

  async removeJobs(match: (job: JobInfo<T>) => boolean): Promise<number> {
    let removed = 0;
    for (const state of ['waiting', 'prioritized', 'delayed', 'paused', 'completed', 'failed'] as const) {
      for (const job of await this.queue.getJobs([state])) {
        if (!job?.id) continue;
        if (!match(await toInfo(job as Job<T>, state))) continue;
        // A job a worker took in the meantime is locked and cannot be removed; it is left alone.
        removed += await job.remove().then(
          () => 1,
          () => 0,
        );
      }
    }
    return removed;
  }

  async ping(): Promise<void> {
    // A real round trip to Redis.
    await this.queue.getJobCounts('waiting');
  }

  async close(): Promise<void> {
    await Promise.all([...this.workers].map((worker) => worker.close()));
    this.workers.clear();
    await this.queue.close();
  }
}
