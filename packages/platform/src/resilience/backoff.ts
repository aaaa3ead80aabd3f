import type { Logger } from 'pino';
import { classifyFailure, type FailureKind } from './failures.js';

/** Waits that double from `initialMs` up to `maxMs`, without end. */
export interface Backoff {
  initialMs: number;
  maxMs: number;
}

/** While a dependency is away: tried again after 1 s, 2 s, 4 s... then every 30 s. */
export const DEPENDENCY_BACKOFF: Backoff = { initialMs: 1_000, maxMs: 30_000 };

/** The wait before try `attempt` (1 = the first retry), with a tenth of jitter so that many waiters do not return at once. */
export function backoffDelay(attempt: number, backoff: Backoff): number {
  const base = Math.min(backoff.maxMs, backoff.initialMs * 2 ** Math.min(30, Math.max(0, attempt - 1)));
  return Math.round(base * (0.9 + Math.random() * 0.1));
}

/** Resolves after `ms`, or rejects at once when the signal aborts (with the signal's reason). */
export function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(abortReason(signal));
    const timer = setTimeout(done, ms);
    function done(): void {
      signal?.removeEventListener('abort', aborted);
      resolve();
    }
    function aborted(): void {
      clearTimeout(timer);
      reject(abortReason(signal!));
    }
    signal?.addEventListener('abort', aborted, { once: true });
  });
}

function abortReason(signal: AbortSignal): unknown {
  return signal.reason ?? new Error('stopped');
}

export interface UntilAvailableOptions {
  /** What is being done, for the log ("storing the derivatives"). */
  what: string;
  logger: Logger;
  /** Stops waiting (a shutdown): the last error is thrown. */
  signal?: AbortSignal;
  backoff?: Backoff;
  /** Called once when the work starts waiting for a dependency, and when it goes on. */
  onWait?: (failure: Extract<FailureKind, { kind: 'dependency' }>) => void;
  onResume?: () => void;
}

/**
 * Runs `work` and, while it fails because a dependency is away (classifyFailure), runs it again
 * after a capped backoff, without end: work whose results are in hand (a transcode's files) is not
 * thrown away because S3 or Redis is away for a while. Any other failure is thrown at once.
 */
export async function untilAvailable<T>(work: () => Promise<T>, options: UntilAvailableOptions): Promise<T> {
  const backoff = options.backoff ?? DEPENDENCY_BACKOFF;
  let waits = 0;
  const started = Date.now();
  for (;;) {
    try {
      const result = await work();
      if (waits > 0) {
        options.logger.info({ what: options.what, waits, waitedMs: Date.now() - started }, 'dependency answers again; going on');
        options.onResume?.();
      }
      return result;
    } catch (error) {
      const failure = classifyFailure(error);
      if (failure.kind !== 'dependency' || options.signal?.aborted) throw error;
      waits++;
      if (waits === 1) {
        options.logger.warn(
          { what: options.what, dependency: failure.dependency, reason: failure.reason },
          'dependency away; waiting for it',
        );
        options.onWait?.(failure);
      } else if (waits % 10 === 0) {
        options.logger.warn(
          { what: options.what, dependency: failure.dependency, reason: failure.reason, waits },
          'still waiting for a dependency',
        );
      }
      await sleep(backoffDelay(waits, backoff), options.signal).catch(() => {
        throw error;
      });
    }
  }
}
