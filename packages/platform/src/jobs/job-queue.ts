/** The job queue port, shaped after BullMQ (Queue for producers, Worker for consumers). */

export type JobState = 'waiting' | 'delayed' | 'active' | 'completed' | 'failed';

export interface JobOptions {
  /** A job with the same id already in the queue (in any state) makes add() a no-op. */
  jobId?: string;
  /** Total tries before the job fails for good (default 3). */
  attempts?: number;
  /** Wait between tries: fixed, or doubling from the given delay (default exponential, 1000 ms). */
  backoff?: { type: 'fixed' | 'exponential'; delay: number };
  /** Do not start before this many ms have passed. */
  delay?: number;
}

export interface JobInfo<T = unknown> {
  id: string;
  name: string;
  data: T;
  state: JobState;
  attemptsMade: number;
  progress: number;
  failedReason: string | null;
  returnValue: unknown;
}

export interface ActiveJob<T = unknown> {
  id: string;
  name: string;
  data: T;
  /** Tries before this one. */
  attemptsMade: number;
  /** Times it was put off with RetryJobLaterError (no try counted). */
  postponements: number;
  updateProgress(progress: number): Promise<void>;
}

export type JobHandler<T> = (job: ActiveJob<T>) => Promise<unknown>;

export interface WorkOptions {
  concurrency?: number;
  /** A job whose worker has not renewed its lock for this long is given to another worker (stalled). */
  lockDurationMs?: number;
  /**
   * Hand-backs a job may have with no try counted (default 3, DEFAULT_FREE_HAND_BACKS). Each
   * hand-back after those counts as a failed try (reason: handedBackTooOftenReason; waiting again
   * at once, no backoff, while tries remain), so a job that
   * is always interrupted (a transcode longer than every shutdown grace period) ends failed after
   * its tries instead of starting again for ever.
   */
  freeHandBacks?: number;
}

export const DEFAULT_FREE_HAND_BACKS = 3;

/**
 * Thrown by a handler: try this job again after `delayMs`, with no try counted (its dependency is
 * away; jobRetryPolicy decides). The job waits as `delayed`, its reason recorded.
 */
export class RetryJobLaterError extends Error {
  override name = 'RetryJobLaterError';
  constructor(
    readonly delayMs: number,
    message: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }
}

/** Thrown by a handler: the job fails for good now, whatever tries it has left (it can never succeed). */
export class JobFailedForGoodError extends Error {
  override name = 'JobFailedForGoodError';
}

const HANDED_BACK_TOO_OFTEN = 'interrupted too many times: its worker shut down before it finished';

/** The failure reason a counted hand-back records (see WorkOptions.freeHandBacks). */
export function handedBackTooOftenReason(handBacks: number): string {
  return `${HANDED_BACK_TOO_OFTEN} (${handBacks} times)`;
}

/** Whether a job's failure reason is that of a counted hand-back rather than an error of its handler. */
export function isHandedBackTooOften(failedReason: string | null | undefined): boolean {
  return typeof failedReason === 'string' && failedReason.startsWith(HANDED_BACK_TOO_OFTEN);
}

export interface JobWorker {
  /** Stops taking jobs and waits for the active ones to finish. */
  close(): Promise<void>;
  /**
   * Stops taking jobs and gives the running ones back to the queue at once: waiting again, with
   * no try counted (up to WorkOptions.freeHandBacks per job; after those each hand-back counts as
   * a failed try), for another worker. What a process does when its shutdown grace period ends
   * before its jobs do (a rollout must not use up a long video's tries). The handlers are not
   * waited for, and what they do afterwards is not recorded. Answers the ids handed back.
   */
  handBack(): Promise<string[]>;
}

/**
 * Contract (shared by the embedded and the BullMQ adapters):
 * - jobs are kept until done; a job added while no worker runs is processed when one starts;
 * - a job whose handler throws is tried again after the backoff, up to `attempts` tries, then
 *   kept in the failed state with its reason;
 * - a job whose handler throws RetryJobLaterError is tried again after the delay it names, with no
 *   try counted (its postponements are), as often as it asks; JobFailedForGoodError fails it now;
 * - a job whose worker died (its lock expired) goes back to waiting and is processed again;
 * - a job its worker hands back is waiting again at once, with no try counted, for its first
 *   `freeHandBacks` hand-backs; each one after counts as a failed try (waiting again at once,
 *   or failed for good with handedBackTooOftenReason once its tries are used up);
 * - at most `concurrency` jobs run at once per worker;
 * - a jobId makes add idempotent.
 */
export interface JobQueue<T = unknown> {
  readonly name: string;
  add(name: string, data: T, options?: JobOptions): Promise<JobInfo<T>>;
  getJob(id: string): Promise<JobInfo<T> | null>;
  counts(): Promise<Record<JobState, number>>;
  /**
   * Since when the oldest waiting job has been due (ms since the epoch): the time it was added,
   * plus its delay; a try after a failure or a hand-back keeps that time. Null when no job waits.
   * What an alert on a queue nobody works (or too few work) reads.
   */
  oldestWaitingSince(): Promise<number | null>;
  work(handler: JobHandler<T>, options?: WorkOptions): Promise<JobWorker>;
  /**
   * Removes every job that is not running and matches (waiting, delayed, completed or failed):
   * what a deleted person leaves in a queue. Answers how many went.
   */
  removeJobs(match: (job: JobInfo<T>) => boolean): Promise<number>;
  ping(): Promise<void>;
  close(): Promise<void>;
}
