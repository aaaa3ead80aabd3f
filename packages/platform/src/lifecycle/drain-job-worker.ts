import type { Logger } from 'pino';
import type { JobWorker } from '../jobs/job-queue.js';

/**
 * How long a worker may let its running jobs finish within a shutdown grace period: all of it but
 * a margin (5 s, or a fifth of a short period) for handing the rest back and closing connections.
 */
export function finishJobsWithinMs(graceMs: number): number {
  return Math.max(0, graceMs - Math.min(5_000, Math.floor(graceMs / 5)));
}

/**
 * Stops taking jobs, lets the running ones finish for up to `withinMs`, then hands those still
 * running back to the queue (waiting, no try counted) so another worker does them, instead of the
 * process being killed with them and their lock expiring as after a crash.
 */
export async function drainJobWorker(worker: JobWorker, withinMs: number, logger: Logger): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  const finished = worker.close().then(() => 'finished' as const);
  const late = new Promise<'late'>((resolve) => {
    timer = setTimeout(() => resolve('late'), withinMs);
  });
  const outcome = await Promise.race([finished, late]);
  clearTimeout(timer);
  if (outcome === 'finished') return;
  const handedBack = await worker.handBack();
  logger.warn({ jobs: handedBack, withinMs }, 'shutdown: jobs still running at the end of the grace period were handed back to the queue');
}
