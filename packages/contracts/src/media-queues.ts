import { MEDIA_TYPES, type MediaType } from './evidence.js';

/**
 * Media jobs go to one queue per kind of work, each worked at its own concurrency, so that a
 * photo waits only for other photos and never for a video being transcoded.
 */
export const MEDIA_QUEUES = { stills: 'media-stills', av: 'media-av' } as const;
export type MediaQueueKind = keyof typeof MEDIA_QUEUES;
export const MEDIA_QUEUE_KINDS = Object.keys(MEDIA_QUEUES) as MediaQueueKind[];

/**
 * The one queue every media job went to before the split. Jobs still in it after an upgrade are
 * worked by the media workers that take `av` (any kind of job: the handler does not care).
 */
export const LEGACY_MEDIA_QUEUE = 'media';

/**
 * The 720p copies of videos made ready with a remux of their own streams (playable-first): a
 * queue of their own, worked beside the audio/video queue by every worker that takes `av`, so
 * that a fresh video's first copy (seconds) never waits for a 720p transcode (minutes).
 */
export const TRANSCODE_MEDIA_QUEUE = 'media-av-720p';

/**
 * The media worker's outbox: each result (`media.stills`, `media.ready`, `media.failed`) waits here
 * until Kafka takes it, so that a transcode whose result cannot be published at once is kept, not
 * made again (QueuedPublisher in the platform).
 */
export const MEDIA_RESULTS_QUEUE = 'media-results';

/** Images are stills; video and audio go through ffmpeg and share the audio/video queue. */
export function mediaQueueKindFor(mediaType: MediaType): MediaQueueKind {
  return mediaType === MEDIA_TYPES.image ? 'stills' : 'av';
}

/** The media queues of one store, by kind, the queue of 720p copies, and the queue from before the split. */
export type MediaQueueSet<Q> = Record<MediaQueueKind, Q> & { transcode: Q; legacy: Q };

/** Opens every media queue with the given opener (the adapter's constructor). */
export function openMediaQueues<Q>(open: (queueName: string) => Q): MediaQueueSet<Q> {
  return {
    stills: open(MEDIA_QUEUES.stills),
    av: open(MEDIA_QUEUES.av),
    transcode: open(TRANSCODE_MEDIA_QUEUE),
    legacy: open(LEGACY_MEDIA_QUEUE),
  };
}

/** Each queue of the set once: for closing, pinging and metrics. */
export function mediaQueueList<Q>(queues: MediaQueueSet<Q>): Q[] {
  return [queues.stills, queues.av, queues.transcode, queues.legacy];
}
