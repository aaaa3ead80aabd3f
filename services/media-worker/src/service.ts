import type { MediaJob, MediaQueueSet } from '@portal/contracts';
import {
  ServiceMetrics,
  drainJobWorker,
  locateFfmpeg,
  type BlobStore,
  type EventBus,
  type JobQueue,
  type JobWorker,
  type Logger,
} from '@portal/platform';
import type { MediaWorkerSettings } from './config.js';
import { mediaJobsHandler } from './media-job-handler.js';
import { sharedFaceDetector } from './faces/face-detector.js';
import type { FaceWork } from './faces/face-work.js';
import { mediaQueuePlan, workMediaQueues } from './media-queue-workers.js';

export interface MediaWorkerRuntime {
  bus: EventBus;
  /** Every media queue (openMediaQueues); the worker takes those its settings name. */
  mediaQueues: MediaQueueSet<JobQueue<MediaJob>>;
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
  const metrics = new ServiceMetrics('media-worker');
  const plan = mediaQueuePlan(runtime.mediaQueues, settings);
  for (const { queue } of plan) metrics.watchQueue(queue);
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
      const handler = mediaJobsHandler({
        blobs: runtime.blobs,
        bus: runtime.bus,
        logger: runtime.logger,
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
      worker = await workMediaQueues(runtime.mediaQueues, settings, (queue) => metrics.timeJobs(queue.name, handler));
    },
    async stop(options = {}) {
      if (!worker) return;
      if (options.handBackAfterMs === undefined) await worker.close();
      else await drainJobWorker(worker, options.handBackAfterMs, runtime.logger);
    },
  };
}
