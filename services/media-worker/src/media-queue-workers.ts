import type { MediaJob, MediaQueueKind, MediaQueueSet } from '@portal/contracts';
import type { JobHandler, JobQueue, JobWorker } from '@portal/platform';

export interface MediaQueueWorkOptions {
  /** The queues to take, as MEDIA_QUEUES names them. */
  queues: MediaQueueKind[];
  concurrency: Record<MediaQueueKind, number>;
  lockDurationMs: number;
  /** Hand-backs per job with no try counted (WorkOptions.freeHandBacks). */
  freeHandBacks: number;
}

/** The queues a worker with these settings takes, with the concurrency of each. */
export function mediaQueuePlan(
  queues: MediaQueueSet<JobQueue<MediaJob>>,
  options: Pick<MediaQueueWorkOptions, 'queues' | 'concurrency'>,
): { queue: JobQueue<MediaJob>; concurrency: number }[] {
  const plan = options.queues.map((kind) => ({ queue: queues[kind], concurrency: options.concurrency[kind] }));
  if (options.queues.includes('av')) {
    // The 720p copies of remuxed videos, in a lane of their own beside the audio/video queue: a
    // fresh video's first copy never waits behind a transcode of minutes.
    plan.push({ queue: queues.transcode, concurrency: options.concurrency.av });
    // Jobs queued before the split (one queue for everything) are drained by the audio/video
    // workers: most of what waits there is video, and a still among them is quick.
    plan.push({ queue: queues.legacy, concurrency: 1 });
  }
  return plan;
}

/**
 * Starts one worker per queue taken, each with its own concurrency: a photo waits only for the
 * photos ahead of it, never for a video that is being transcoded.
 */
export async function workMediaQueues(
  queues: MediaQueueSet<JobQueue<MediaJob>>,
  options: MediaQueueWorkOptions,
  handlerFor: (queue: JobQueue<MediaJob>) => JobHandler<MediaJob>,
): Promise<JobWorker> {
  const workers: JobWorker[] = [];
  // One worker for all: closing waits for every queue's running jobs; handing back (a shutdown's
  // grace period ending, possibly while close() still waits) gives back every queue's.
  const combined: JobWorker = {
    close: async () => void (await Promise.all(workers.map((worker) => worker.close()))),
    handBack: async () => (await Promise.all(workers.map((worker) => worker.handBack()))).flat(),
  };
  try {
    for (const { queue, concurrency } of mediaQueuePlan(queues, options)) {
      workers.push(
        await queue.work(handlerFor(queue), { concurrency, lockDurationMs: options.lockDurationMs, freeHandBacks: options.freeHandBacks }),
      );
    }
  } catch (error) {
    await combined.close();
    throw error;
  }
  return combined;
}
