import type { MediaJob, MediaQueueSet } from '@portal/contracts';
import {
  QueuedPublisher,
  ServiceMetrics,
  drainJobWorker,
  holdWhileAway,
  locateFfmpeg,
  type BlobStore,
  type EventBus,
  type JobQueue,
  type JobWorker,
  type Logger,
  type QueuedEvent,
} from '@portal/platform';
import type { MediaWorkerSettings } from './config.js';
import { mediaJobsHandler, type FfmpegRunKind } from './media-job-handler.js';
import { sharedFaceDetector } from './faces/face-detector.js';
import type { FaceWork } from './faces/face-work.js';
import { mediaQueuePlan, workMediaQueues } from './media-queue-workers.js';

export interface MediaWorkerRuntime {
  bus: EventBus;
  /** Every media queue (openMediaQueues); the worker takes those its settings name. */
  mediaQueues: MediaQueueSet<JobQueue<MediaJob>>;
  /**
   * The outbox of results (MEDIA_RESULTS_QUEUE): each result waits there until the bus takes it.
   * Both processes that run a media worker give it; without it (a test) results go to the bus directly.
   */
  results?: JobQueue<QueuedEvent>;
  blobs: BlobStore;
  logger: Logger;
}

export interface MediaWorkerHandle {
  metrics: ServiceMetrics;
  start(): Promise<void>;
  /**
   * Stops taking jobs and lets the running ones finish; with `handBackAfterMs`, those still
   * running then are handed back to the queue for another worker.
   */
  stop(options?: { handBackAfterMs?: number }): Promise<void>;
}

export function createMediaWorker(settings: MediaWorkerSettings, runtime: MediaWorkerRuntime): MediaWorkerHandle {
  let worker: JobWorker | undefined;
  let publisher: JobWorker | undefined;
  const metrics = new ServiceMetrics('media-worker');
  const plan = mediaQueuePlan(runtime.mediaQueues, settings);
  for (const { queue } of plan) metrics.watchQueue(queue);
  if (runtime.results) metrics.watchQueue(runtime.results);
  const ffmpegRuns = metrics.counter(
    'portal_media_ffmpeg_runs_total',
    'ffmpeg processes started for media jobs, by what for: transcode (a video to 720p), remux, audio, poster',
    ['kind'],
  );
  for (const kind of ['transcode', 'remux', 'audio', 'poster'] satisfies FfmpegRunKind[]) ffmpegRuns.inc({ kind }, 0);
  const outbox = runtime.results ? new QueuedPublisher(runtime.results) : null;
  const facesFound = metrics.counter('portal_media_faces_found_total', 'Faces found in photos and videos (each face of a video once)', [
    'kind',
  ]);
  const facesChecked = metrics.counter(
    'portal_media_face_checks_total',
    'Photos and videos checked for faces, or whose public copies were made again',
    ['kind'],
  );
  const faceSeconds = metrics.counter(
    'portal_media_face_seconds_total',
    'Seconds spent finding faces and making the blurred public copies',
    ['kind'],
  );
  const detector = settings.faces.mode === 'auto' ? sharedFaceDetector({ minConfidence: settings.faces.minConfidence }) : null;
  const faces: FaceWork | undefined = detector
    ? {
        settings: settings.faces,
        detector,
        observe: (kind, found, seconds) => {
          facesChecked.inc({ kind });
          facesFound.inc({ kind }, found);
          faceSeconds.inc({ kind }, seconds);
        },
      }
    : undefined;
  return {
    metrics,
    async start() {
      const binaries = locateFfmpeg();
      const queues = Object.fromEntries(plan.map(({ queue, concurrency }) => [queue.name, concurrency]));
      runtime.logger.info(
        { ...binaries, queues, caps: settings.caps, transcodePolicy: settings.transcodePolicy, faces: settings.faces },
        'media worker starting',
      );
      // Results go to the bus through the outbox, whose worker publishes them, each retried alone
      // while Kafka is away: a finished job never waits for Kafka, nor runs again because of it.
      if (outbox && runtime.results) {
        const queue = runtime.results.name;
        publisher = await outbox.work(runtime.bus, runtime.logger, { wrap: (publish) => metrics.timeJobs(queue, publish) });
      }
      const handler = mediaJobsHandler({
        blobs: runtime.blobs,
        bus: outbox ?? runtime.bus,
        logger: runtime.logger,
        ffmpegRun: (kind, jobId) => {
          ffmpegRuns.inc({ kind });
          runtime.logger.info({ jobId, kind }, 'ffmpeg run');
        },
        workRoot: settings.workRoot,
        caps: settings.caps,
        ffmpegNiceness: settings.ffmpegNiceness,
        watchdog: settings.watchdog,
        transcodePolicy: settings.transcodePolicy,
        // The 720p copy of a remuxed video is a job of the 720p queue, worked beside the
        // audio/video queue (mediaQueuePlan), so the next video's first copy does not wait for it.
        transcodeQueue: runtime.mediaQueues.transcode,
        faces,
      });
      // An original that cannot be fetched (S3 away) puts the job off with no try counted.
      const held = holdWhileAway(handler, { logger: runtime.logger });
      worker = await workMediaQueues(runtime.mediaQueues, settings, (queue) => metrics.timeJobs(queue.name, held));
    },
    async stop(options = {}) {
      if (worker) {
        if (options.handBackAfterMs === undefined) await worker.close();
        else await drainJobWorker(worker, options.handBackAfterMs, runtime.logger);
      }
      await publisher?.close();
    },
  };
}
