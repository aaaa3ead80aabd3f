import { randomUUID } from 'node:crypto';
import type { Logger } from 'pino';
import { openDatabase, type SqliteDatabase } from '../sqlite/open-database.js';
import { continueWork, currentWorkOrigin } from '../context/continue-work.js';
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

const MIGRATIONS = [
  `CREATE TABLE jobs (
     queue TEXT NOT NULL,
     id TEXT NOT NULL,
     name TEXT NOT NULL,
     data TEXT NOT NULL,
     state TEXT NOT NULL,
     attempts_made INTEGER NOT NULL DEFAULT 0,
     max_attempts INTEGER NOT NULL,
     backoff_type TEXT NOT NULL,
     backoff_delay INTEGER NOT NULL,
     run_at INTEGER NOT NULL,
     locked_until INTEGER,
     lock_token TEXT,
     progress REAL NOT NULL DEFAULT 0,
     failed_reason TEXT,
     return_value TEXT,
     created_at INTEGER NOT NULL,
     finished_at INTEGER,
     PRIMARY KEY (queue, id)
   );
   CREATE INDEX jobs_ready ON jobs (queue, state, run_at);`,
  `ALTER TABLE jobs ADD COLUMN traceparent TEXT;`,
  `ALTER TABLE jobs ADD COLUMN hand_backs INTEGER NOT NULL DEFAULT 0;`,
  `ALTER TABLE jobs ADD COLUMN request_id TEXT;`,
  // When the job was first due (added, plus its delay): run_at moves with each retry's backoff.
  `ALTER TABLE jobs ADD COLUMN due_at INTEGER;`,
  `ALTER TABLE jobs ADD COLUMN postponements INTEGER NOT NULL DEFAULT 0;`,
  // Taking the next job and pruning the completed ones are index seeks, whatever the backlog: with
  // thousands of jobs waiting (a box office's import queues two messages a line), a sort or a scan
  // of them on every claim and every completion held the all-in-one process's event loop.
  `DROP INDEX jobs_ready;
   CREATE INDEX jobs_ready ON jobs (queue, state, run_at, created_at);
   CREATE INDEX jobs_finished ON jobs (queue, state, finished_at);`,
];

/** The states whose jobs run once their time (run_at) has come. */
const RUNNABLE_STATES = ['waiting', 'delayed'] as const;

interface JobRow {
  queue: string;
  id: string;
  name: string;
  data: string;
  state: JobState;
  attempts_made: number;
  max_attempts: number;
  backoff_type: 'fixed' | 'exponential';
  backoff_delay: number;
  run_at: number;
  progress: number;
  failed_reason: string | null;
  return_value: string | null;
  traceparent: string | null;
  hand_backs: number;
  request_id: string | null;
  postponements: number;
  created_at: number;
}

export interface SqliteJobQueueOptions {
  /** SQLite file holding the jobs, e.g. DATA_DIR/jobs.sqlite. */
  file: string;
  queue: string;
  logger: Logger;
  pollIntervalMs?: number;
  /** Completed jobs are deleted after this long (ms; default 1 day). Failed jobs are kept. */
  keepCompletedMs?: number;
}

/**
 * The embedded job queue: jobs in a SQLite table with BullMQ's semantics (states, retries with
 * backoff, locks that expire when a worker dies, concurrency). Work survives a restart because
 * nothing lives only in memory.
 */
export class SqliteJobQueue<T = unknown> implements JobQueue<T> {
  readonly name: string;
  private readonly db: SqliteDatabase;
  private readonly workers = new Set<QueueWorker<T>>();
  private closed = false;

  constructor(private readonly options: SqliteJobQueueOptions) {
    this.name = options.queue;
    this.db = openDatabase(options.file, MIGRATIONS);
  }

  async add(name: string, data: T, options: JobOptions = {}): Promise<JobInfo<T>> {
    this.assertOpen();
    const id = options.jobId ?? randomUUID();
    const now = Date.now();
    const origin = currentWorkOrigin();
    this.db
      .prepare(
        `INSERT INTO jobs (queue, id, name, data, state, max_attempts, backoff_type, backoff_delay, run_at, due_at, created_at, traceparent, request_id)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
         ON CONFLICT (queue, id) DO NOTHING`,
      )
      .run(
        this.name,
        id,
        name,
        JSON.stringify(data),
        options.delay ? 'delayed' : 'waiting',
        Math.max(1, options.attempts ?? 3),
        options.backoff?.type ?? 'exponential',
        options.backoff?.delay ?? 1000,
        now + (options.delay ?? 0),
        now + (options.delay ?? 0),
        now,
        origin.traceparent ?? null,
        origin.requestId ?? null,
      );
    for (const worker of this.workers) worker.wake();
    return (await this.getJob(id))!;
  }

  async getJob(id: string): Promise<JobInfo<T> | null> {
    const row = this.db.prepare('SELECT * FROM jobs WHERE queue = ? AND id = ?').get(this.name, id) as JobRow | undefined;
    return row ? toInfo<T>(row) : null;
  }

  async counts(): Promise<Record<JobState, number>> {
    const counts: Record<JobState, number> = { waiting: 0, delayed: 0, active: 0, completed: 0, failed: 0 };
    const rows = this.db.prepare('SELECT state, COUNT(*) AS n FROM jobs WHERE queue = ? GROUP BY state').all(this.name) as {
      state: JobState;
      n: number;
    }[];
    for (const row of rows) counts[row.state] = row.n;
    return counts;
  }

  async oldestWaitingSince(): Promise<number | null> {
    // A delayed job whose time has come is waiting (BullMQ moves it to its wait list then).
    const row = this.db
      .prepare(
        `SELECT MIN(COALESCE(due_at, run_at)) AS since FROM jobs
         WHERE queue = ? AND (state = 'waiting' OR (state = 'delayed' AND run_at <= ?))`,
      )
      .get(this.name, Date.now()) as { since: number | null };
    return row.since;
  }

  async work(handler: JobHandler<T>, options: WorkOptions = {}): Promise<JobWorker> {
    this.assertOpen();
    const worker = new QueueWorker<T>(this, handler, {
      concurrency: Math.max(1, options.concurrency ?? 1),
      lockDurationMs: options.lockDurationMs ?? 30_000,
      freeHandBacks: Math.max(0, options.freeHandBacks ?? DEFAULT_FREE_HAND_BACKS),
      pollIntervalMs: this.options.pollIntervalMs ?? 500,
      logger: this.options.logger,
    });
    this.workers.add(worker);
    worker.start();
    return {
      close: async () => {
        await worker.stop();
        this.workers.delete(worker);
      },
      handBack: async () => {
        this.workers.delete(worker);
        return worker.handBack();
      },
    };
  }

  async removeJobs(match: (job: JobInfo<T>) => boolean): Promise<number> {
    this.assertOpen();
    const rows = this.db.prepare(`SELECT * FROM jobs WHERE queue = ? AND state <> 'active'`).all(this.name) as JobRow[];
    const ids = rows.filter((row) => match(toInfo<T>(row))).map((row) => row.id);
    const remove = this.db.prepare(`DELETE FROM jobs WHERE queue = ? AND id = ? AND state <> 'active'`);
    return this.db.transaction(() => ids.reduce((count, id) => count + remove.run(this.name, id).changes, 0))();
  }

  async ping(): Promise<void> {
    this.assertOpen();
    this.db.prepare('SELECT 1').get();
  }

  async close(): Promise<void> {
    if (this.closed) return;
    await Promise.all([...this.workers].map((worker) => worker.stop()));
    this.workers.clear();
    this.closed = true;
    this.db.close();
  }

  // --- used by QueueWorker ----------------------------------------------------------------

  /** @internal Takes the next runnable job, locking it for this worker; null when none. */
  claim(lockDurationMs: number): { row: JobRow; token: string } | null {
    if (this.closed) return null;
    const now = Date.now();
    const token = randomUUID();
    return this.db
      .transaction(() => {
        // Jobs whose worker stopped renewing its lock are given back (BullMQ's stalled jobs).
        this.db
          .prepare(
            `UPDATE jobs SET state = 'waiting', lock_token = NULL, locked_until = NULL WHERE queue = ? AND state = 'active' AND locked_until < ?`,
          )
          .run(this.name, now);
        // One seek of the index per state (an IN over both would sort every runnable job).
        const next = this.db.prepare(
          `SELECT * FROM jobs WHERE queue = ? AND state = ? AND run_at <= ? ORDER BY run_at, created_at LIMIT 1`,
        );
        const row = RUNNABLE_STATES.map((state) => next.get(this.name, state, now) as JobRow | undefined)
          .filter((candidate): candidate is JobRow => candidate !== undefined)
          .reduce<JobRow | undefined>(
            (first, candidate) => (first === undefined || runsBefore(candidate, first) ? candidate : first),
            undefined,
          );
        if (!row) return null;
        this.db
          .prepare(`UPDATE jobs SET state = 'active', lock_token = ?, locked_until = ? WHERE queue = ? AND id = ?`)
          .run(token, now + lockDurationMs, this.name, row.id);
        return { row, token };
      })
      .immediate();
  }

  /** @internal */
  renewLock(id: string, token: string, lockDurationMs: number): boolean {
    if (this.closed) return false;
    return (
      this.db
        .prepare(`UPDATE jobs SET locked_until = ? WHERE queue = ? AND id = ? AND lock_token = ? AND state = 'active'`)
        .run(Date.now() + lockDurationMs, this.name, id, token).changes > 0
    );
  }

  /**
   * @internal Gives a running job back, its lock released: waiting again at once with no try
   * counted for its first `freeHandBacks` hand-backs; after those, a failed try (fail()).
   */
  release(id: string, token: string, freeHandBacks: number): boolean {
    if (this.closed) return false;
    return this.db
      .transaction(() => {
        const row = this.db
          .prepare(`SELECT * FROM jobs WHERE queue = ? AND id = ? AND lock_token = ? AND state = 'active'`)
          .get(this.name, id, token) as JobRow | undefined;
        if (!row) return false;
        const handBacks = row.hand_backs + 1;
        this.db.prepare('UPDATE jobs SET hand_backs = ? WHERE queue = ? AND id = ?').run(handBacks, this.name, id);
        if (handBacks > freeHandBacks) {
          // No backoff: the job did nothing wrong, its worker went away.
          const outcome = this.fail(row, token, handedBackTooOftenReason(handBacks), { backoff: false });
          this.options.logger.warn(
            { jobId: id, queue: this.name, handBacks, outcome },
            'job handed back too often: the hand-back counts as a try',
          );
          return true;
        }
        this.db
          .prepare(`UPDATE jobs SET state = 'waiting', run_at = ?, lock_token = NULL, locked_until = NULL WHERE queue = ? AND id = ?`)
          .run(Date.now(), this.name, id);
        return true;
      })
      .immediate();
  }

  /** @internal */
  setProgress(id: string, token: string, progress: number): void {
    if (this.closed) return;
    this.db.prepare('UPDATE jobs SET progress = ? WHERE queue = ? AND id = ? AND lock_token = ?').run(progress, this.name, id, token);
  }

  /** @internal */
  complete(id: string, token: string, returnValue: unknown): void {
    if (this.closed) return;
    const now = Date.now();
    this.db
      .prepare(
        `UPDATE jobs SET state = 'completed', attempts_made = attempts_made + 1, progress = 100, return_value = ?,
           finished_at = ?, lock_token = NULL, locked_until = NULL
         WHERE queue = ? AND id = ? AND lock_token = ?`,
      )
      .run(JSON.stringify(returnValue ?? null), now, this.name, id, token);
    this.db
      .prepare(`DELETE FROM jobs WHERE queue = ? AND state = 'completed' AND finished_at <= ?`)
      .run(this.name, now - (this.options.keepCompletedMs ?? 24 * 3600_000));
  }

  /** @internal Puts a job off (RetryJobLaterError): delayed again, no try counted. */
  postpone(row: JobRow, token: string, delayMs: number, reason: string): void {
    if (this.closed) return;
    this.db
      .prepare(
        `UPDATE jobs SET state = 'delayed', postponements = postponements + 1, failed_reason = ?, run_at = ?, lock_token = NULL, locked_until = NULL
         WHERE queue = ? AND id = ? AND lock_token = ?`,
      )
      .run(reason, Date.now() + Math.max(0, delayMs), this.name, row.id, token);
  }

  /** @internal Records a failed try: back to delayed with backoff (waiting at once without), or failed for good (at once when `final`). */
  fail(row: JobRow, token: string, reason: string, options: { backoff?: boolean; final?: boolean } = {}): 'retry' | 'failed' {
    if (this.closed) return 'retry';
    const attemptsMade = row.attempts_made + 1;
    if (attemptsMade >= row.max_attempts || options.final) {
      this.db
        .prepare(
          `UPDATE jobs SET state = 'failed', attempts_made = ?, failed_reason = ?, finished_at = ?, lock_token = NULL, locked_until = NULL
           WHERE queue = ? AND id = ? AND lock_token = ?`,
        )
        .run(attemptsMade, reason, Date.now(), this.name, row.id, token);
      return 'failed';
    }
    const wait =
      options.backoff === false ? 0 : row.backoff_type === 'fixed' ? row.backoff_delay : row.backoff_delay * 2 ** (attemptsMade - 1);
    this.db
      .prepare(
        `UPDATE jobs SET state = ${wait === 0 ? "'waiting'" : "'delayed'"}, attempts_made = ?, failed_reason = ?, run_at = ?, lock_token = NULL, locked_until = NULL
         WHERE queue = ? AND id = ? AND lock_token = ?`,
      )
      .run(attemptsMade, reason, Date.now() + wait, this.name, row.id, token);
    return 'retry';
  }

  /** @internal When the earliest delayed job becomes runnable (ms from now), or null. */
  nextRunIn(): number | null {
    const earliest = this.db.prepare(`SELECT MIN(run_at) AS next FROM jobs WHERE queue = ? AND state = ?`);
    const times = RUNNABLE_STATES.map((state) => (earliest.get(this.name, state) as { next: number | null }).next).filter(
      (time): time is number => time !== null,
    );
    return times.length === 0 ? null : Math.max(0, Math.min(...times) - Date.now());
  }

  private assertOpen(): void {
    if (this.closed) throw new Error('The job queue is closed');
  }
}

/** Whether `a` comes before `b` in the order jobs are taken: by their time, then by when they were added. */
function runsBefore(a: JobRow, b: JobRow): boolean {
  return a.run_at < b.run_at || (a.run_at === b.run_at && a.created_at < b.created_at);
}

function toInfo<T>(row: JobRow): JobInfo<T> {
  return {
    id: row.id,
    name: row.name,
    data: JSON.parse(row.data) as T,
    state: row.state,
    attemptsMade: row.attempts_made,
    progress: row.progress,
    failedReason: row.failed_reason,
    returnValue: row.return_value === null ? undefined : (JSON.parse(row.return_value) as unknown),
  };
}

interface WorkerSettings {
  concurrency: number;
  lockDurationMs: number;
  freeHandBacks: number;
  pollIntervalMs: number;
  logger: Logger;
}

class QueueWorker<T> {
  private running = false;
  private readonly active = new Set<Promise<void>>();
  /** Running job id -> its lock token. */
  private readonly holding = new Map<string, string>();
  private wakeUp: (() => void) | undefined;
  private loop: Promise<void> | undefined;

  constructor(
    private readonly queue: SqliteJobQueue<T>,
    private readonly handler: JobHandler<T>,
    private readonly settings: WorkerSettings,
  ) {}

  start(): void {
    this.running = true;
    this.loop = this.run();
  }

  wake(): void {
    this.wakeUp?.();
  }

  async stop(): Promise<void> {
    if (!this.running) return;
    this.running = false;
    this.wake();
    await this.loop;
    await Promise.all(this.active);
  }

  /** Stops taking jobs and releases the running ones without waiting for their handlers. */
  async handBack(): Promise<string[]> {
    this.running = false;
    this.wake();
    await this.loop;
    const released = [...this.holding]
      .filter(([id, token]) => this.queue.release(id, token, this.settings.freeHandBacks))
      .map(([id]) => id);
    this.holding.clear();
    return released;
  }

  private async run(): Promise<void> {
    while (this.running) {
      while (this.running && this.active.size < this.settings.concurrency) {
        const claimed = this.queue.claim(this.settings.lockDurationMs);
        if (!claimed) break;
        const task = this.execute(claimed.row, claimed.token).finally(() => {
          this.active.delete(task);
          this.wake();
        });
        this.active.add(task);
      }
      if (!this.running) break;
      const next = this.queue.nextRunIn();
      const wait =
        this.active.size >= this.settings.concurrency
          ? this.settings.pollIntervalMs
          : Math.min(next ?? this.settings.pollIntervalMs, this.settings.pollIntervalMs);
      await new Promise<void>((resolve) => {
        const timer = setTimeout(done, wait);
        const self = this;
        function done(): void {
          clearTimeout(timer);
          self.wakeUp = undefined;
          resolve();
        }
        this.wakeUp = done;
      });
    }
  }

  private async execute(row: JobRow, token: string): Promise<void> {
    const { lockDurationMs, logger } = this.settings;
    const heartbeat = setInterval(() => this.queue.renewLock(row.id, token, lockDurationMs), Math.max(50, lockDurationMs / 3));
    this.holding.set(row.id, token);
    const job: ActiveJob<T> = {
      id: row.id,
      name: row.name,
      data: JSON.parse(row.data) as T,
      attemptsMade: row.attempts_made,
      postponements: row.postponements,
      updateProgress: async (progress) => this.queue.setProgress(row.id, token, progress),
    };
    try {
      const result = await continueWork(
        { traceparent: row.traceparent ?? undefined, requestId: row.request_id ?? undefined },
        { handler: this.queue.name, span: `${this.queue.name} job`, attributes: { 'job.id': row.id } },
        () => this.handler(job),
      );
      this.queue.complete(row.id, token, result);
    } catch (error) {
      const reason = error instanceof Error ? error.message : String(error);
      if (error instanceof RetryJobLaterError) {
        this.queue.postpone(row, token, error.delayMs, reason);
        return;
      }
      const outcome = this.queue.fail(row, token, reason, { final: error instanceof JobFailedForGoodError });
      logger[outcome === 'failed' ? 'error' : 'warn']({ jobId: row.id, queue: this.queue.name, err: error, outcome }, 'job failed');
    } finally {
      clearInterval(heartbeat);
      this.holding.delete(row.id);
    }
  }
}
