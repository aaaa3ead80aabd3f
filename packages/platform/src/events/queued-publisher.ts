import type { Logger } from 'pino';
import type { JobHandler, JobQueue, JobWorker } from '../jobs/job-queue.js';
import { holdWhileAway } from '../resilience/job-policy.js';
import type { Backoff } from '../resilience/backoff.js';
import type { EventBus, OutgoingMessage } from './event-bus.js';

/** One event waiting in a publisher's queue for the bus. */
export interface QueuedEvent {
  topic: string;
  message: OutgoingMessage;
}

/**
 * An outbox for a process that keeps no database of its own (the media worker): publish() adds
 * each event to a job queue (Redis, or the embedded SQLite queue: kept across restarts) and
 * returns; a worker of that queue publishes them to the bus, one at a time in the order they came,
 * each retried alone, with no try counted, while the bus is away (holdWhileAway). What made the
 * events (a transcode) is never done again because Kafka was away when it finished.
 */
export class QueuedPublisher implements Pick<EventBus, 'publish'> {
  constructor(private readonly queue: JobQueue<QueuedEvent>) {}

  async publish(topic: string, messages: OutgoingMessage[]): Promise<void> {
    for (const message of messages) {
      // The event id as the job id: an event queued twice (a job run again) is published once.
      await this.queue.add('publish', { topic, message }, { jobId: `${topic}.${message.value.id}`, attempts: 5 });
    }
  }

  /** Publishes what waits, and what comes, to the bus; `wrap` times the jobs (ServiceMetrics.timeJobs). */
  work(
    bus: Pick<EventBus, 'publish'>,
    logger: Logger,
    options: { backoff?: Backoff; wrap?: (handler: JobHandler<QueuedEvent>) => JobHandler<QueuedEvent> } = {},
  ): Promise<JobWorker> {
    const publish = holdWhileAway<QueuedEvent, void>(async (job) => bus.publish(job.data.topic, [job.data.message]), {
      logger,
      ...(options.backoff ? { backoff: options.backoff } : {}),
    });
    return this.queue.work(options.wrap ? options.wrap(publish) : publish, { concurrency: 1 });
  }
}
