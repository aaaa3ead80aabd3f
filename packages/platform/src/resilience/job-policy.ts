import type { Logger } from 'pino';
import { JobFailedForGoodError, RetryJobLaterError, type ActiveJob } from '../jobs/job-queue.js';
import { DEPENDENCY_BACKOFF, backoffDelay, type Backoff } from './backoff.js';
import { classifyFailure, type FailureKind } from './failures.js';

/** A dependency's failure, as classifyFailure tells it. */
export type DependencyFailure = Extract<FailureKind, { kind: 'dependency' }>;

/**
 * The job's side of the policy (failures.ts): a job whose dependency is away is put off, with no try
 * counted, after a capped backoff, until it works or its deadline passes; then null (the caller
 * records what became of it). Its tries are kept for failures that are its own.
 */
export function postponement(
  job: Pick<ActiveJob, 'postponements'>,
  failure: DependencyFailure,
  options: { deadline?: number | null; backoff?: Backoff; now?: number } = {},
): RetryJobLaterError | null {
  const now = options.now ?? Date.now();
  const deadline = options.deadline ?? null;
  if (deadline !== null && now >= deadline) return null;
  const wait = backoffDelay(job.postponements + 1, options.backoff ?? DEPENDENCY_BACKOFF);
  const delay = deadline === null ? wait : Math.max(0, Math.min(wait, deadline - now));
  return new RetryJobLaterError(delay, `waiting for ${failure.dependency}: ${failure.reason}`);
}

export interface HoldWhileAwayOptions<T> {
  logger: Logger;
  backoff?: Backoff;
  /** When waiting stops making sense (ms since the epoch), or null for never (the default). */
  deadline?: (job: ActiveJob<T>) => number | null;
  /** Why the job failed, when its deadline passed with the dependency still away. */
  gaveUp?: (job: ActiveJob<T>, failure: DependencyFailure) => string;
}

/**
 * A job handler under the policy: a dependency away puts the job off (no try counted) until its
 * deadline, then fails it for good; poison fails it at once; anything else is a counted try.
 */
export function holdWhileAway<T, R>(
  handler: (job: ActiveJob<T>) => Promise<R>,
  options: HoldWhileAwayOptions<T>,
): (job: ActiveJob<T>) => Promise<R> {
  return async (job) => {
    try {
      return await handler(job);
    } catch (error) {
      if (error instanceof RetryJobLaterError || error instanceof JobFailedForGoodError) throw error;
      const failure = classifyFailure(error);
      if (failure.kind === 'poison') throw new JobFailedForGoodError(failure.reason, { cause: error });
      if (failure.kind !== 'dependency') throw error;
      const later = postponement(job, failure, {
        deadline: options.deadline?.(job) ?? null,
        ...(options.backoff ? { backoff: options.backoff } : {}),
      });
      if (!later) {
        const reason = options.gaveUp?.(job, failure) ?? `${failure.dependency} could not be reached in time: ${failure.reason}`;
        options.logger.error({ jobId: job.id, dependency: failure.dependency, postponements: job.postponements }, reason);
        throw new JobFailedForGoodError(reason, { cause: error });
      }
      if (job.postponements === 0 || (job.postponements + 1) % 10 === 0) {
        options.logger.warn(
          {
            jobId: job.id,
            dependency: failure.dependency,
            reason: failure.reason,
            postponements: job.postponements + 1,
            retryInMs: later.delayMs,
          },
          'dependency away: the job waits for it (no try counted)',
        );
      }
      throw later;
    }
  };
}
