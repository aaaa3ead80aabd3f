import { createWriteStream } from 'node:fs';
import { mkdir, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { buffer } from 'node:stream/consumers';
import { pipeline } from 'node:stream/promises';
import {
  MEDIA_TYPES,
  NO_DERIVATIVES,
  REMUXED_DISPLAY_NAME,
  TOPICS,
  faceRegionsSchema,
  type FaceRegions,
  type MediaBlurredData,
  type MediaJob,
  type MediaProcessedData,
  type MediaStillsData,
} from '@portal/contracts';
import {
  MEDIA_DEMUXERS,
  capBreach,
  createEvent,
  formatAgrees,
  isMediaDemuxer,
  mediaCapsFromEnv,
  probeMedia,
  tooLongMessage,
  untilAvailable,
  type ActiveJob,
  type BlobStore,
  type EventBus,
  type JobQueue,
  type Logger,
  type MediaCaps,
  type ProbeResult,
} from '@portal/platform';
import { UnprocessableMediaError } from './processing/media-error.js';
import { pictureInput, stillImages } from './processing/still-images.js';
import { chosenStreams, posterFrame, remuxVideo, transcodeVideo } from './processing/video.js';
import { playability, shownSize, type TranscodePolicy } from './processing/playable.js';
import { transcodeAudio } from './processing/audio.js';
import { DEFAULT_TRANSCODE_WATCHDOG, probedSeconds, type TranscodeWatchdog } from './processing/ffmpeg-runner.js';
import {
  blurredPhotoCopies,
  blurredVideoCopies,
  NOT_CHECKED,
  checkPhoto,
  checkVideo,
  checksOff,
  type FaceWork,
  type PutBlob,
  type VideoPicture,
} from './faces/face-work.js';

/** What ffmpeg is run for, as counted (portal_media_ffmpeg_runs_total). */
export type FfmpegRunKind = 'transcode' | 'remux' | 'audio' | 'poster';

export interface MediaJobDeps {
  blobs: BlobStore;
  /** Where results go: the media worker's outbox (QueuedPublisher), or a bus. */
  bus: Pick<EventBus, 'publish'>;
  logger: Logger;
  /** Told each time ffmpeg is started for a job, and what for. */
  ffmpegRun?: (kind: FfmpegRunKind, jobId: string) => void;
  /** Scratch space for originals and outputs while a job runs. */
  workRoot: string;
  /** Longest video and recording, most tracks (MEDIA_MAX_*); the defaults when not given. */
  caps?: MediaCaps;
  /** The niceness ffmpeg runs at (MEDIA_AV_NICE); 0 (the worker's own) when not given. */
  ffmpegNiceness?: number;
  /** How long a transcode may run for its input's length (MEDIA_TRANSCODE_*); the defaults when not given. */
  watchdog?: TranscodeWatchdog;
  /**
   * MEDIA_TRANSCODE_POLICY. `playable-first`: a video every browser plays is ready with a remux
   * of its streams, and its 720p copy is a second job added to `transcodeQueue` (the audio/video
   * queue). `always` (when not given): every video is transcoded before it is ready.
   */
  transcodePolicy?: TranscodePolicy;
  transcodeQueue?: JobQueue<MediaJob>;
  /**
   * The face check (FACE_BLUR): every photo's and every 720p video copy's faces found and
   * pixelated in public copies. Not given: nothing is checked (results say `off`).
   */
  faces?: FaceWork;
}

/** A video's poster, thumbnail and placeholder, as stored. */
type Stills = NonNullable<MediaJob['stills']>;

type Derivatives = Pick<
  MediaProcessedData,
  'display' | 'thumbnail' | 'poster' | 'placeholder' | 'width' | 'height' | 'duration' | 'display_copy' | 'faces' | 'public'
> & {
  /** The job that makes the 720p copy of a video made ready with a remux. */
  followUp?: MediaJob;
};

/** The id of the job that makes the 720p copy of a video whose first copy is a remux. */
export function transcodeJobIdFor(data: Pick<MediaJob, 'evidenceId' | 'revision'>): string {
  return `${data.evidenceId}.r${data.revision}.720p`;
}

/**
 * One media job: fetch the private original, make the public derivatives, store them under the
 * job's prefix, and report the result on the bus. Running it twice gives the same keys and the
 * same report, so retries and redeliveries are harmless. A file that cannot be processed ends as
 * a "failed" report with the reason; anything else is thrown so the job is retried. Once ffmpeg
 * has made the derivatives, a dependency away (S3 taking them, Redis taking the report into the
 * outbox) is waited for where the job is (untilAvailable): the derivatives are kept, not made again.
 */
export function mediaJobHandler(deps: MediaJobDeps) {
  if (deps.transcodePolicy === 'playable-first' && !deps.transcodeQueue)
    throw new Error('the playable-first policy needs the queue of the 720p jobs');
  return async (job: ActiveJob<MediaJob>): Promise<MediaProcessedData> => {
    const keep = keeper(deps, job.id);
    const counted = (kind: FfmpegRunKind) => deps.ffmpegRun?.(kind, job.id);
    const data = job.data;
    const workDir = await freshWorkDir(deps, job.id);
    const started = Date.now();
    try {
      const original = join(workDir, 'original');
      const object = await deps.blobs.get(data.originalKey);
      if (!object && data.step === 'transcode') {
        // The item was deleted or its file replaced since its first copy: nothing to make.
        deps.logger.info({ jobId: job.id }, 'the original is gone; no 720p copy to make');
        return {
          evidenceId: data.evidenceId,
          revision: data.revision,
          status: 'failed',
          media_type: data.media_type,
          error: 'The uploaded file is missing',
          ...NO_DERIVATIVES,
        };
      }
      if (!object) throw new UnprocessableMediaError('The uploaded file is missing');
      await pipeline(object.body, createWriteStream(original));

      let result: MediaProcessedData;
      let followUp: MediaJob | undefined;
      try {
        const { followUp: next, ...derivatives } = await process(
          { ...deps, keep, counted },
          data,
          original,
          workDir,
          (percent) => void job.updateProgress(Math.round(percent)),
          // Poster first: announced before the display copy is made, so that lists and the review
          // queue show the picture while a transcode takes minutes.
          async (stills) => {
            const announced: MediaStillsData = {
              evidenceId: data.evidenceId,
              revision: data.revision,
              media_type: data.media_type,
              thumbnail: stills.thumbnail!,
              poster: stills.poster!,
              placeholder: stills.placeholder,
            };
            const event = createEvent({ type: 'media.stills', key: data.evidenceId, data: announced });
            await keep('announcing the stills', () => deps.bus.publish(TOPICS.media, [{ key: data.evidenceId, value: event }]));
          },
        );
        followUp = next;
        result = {
          evidenceId: data.evidenceId,
          revision: data.revision,
          status: 'ready',
          media_type: data.media_type,
          error: null,
          ...derivatives,
        };
      } catch (error) {
        if (!(error instanceof UnprocessableMediaError)) throw error;
        if (data.step === 'transcode') {
          // The item is ready with its remuxed copy and keeps it: a 720p copy that cannot be made
          // (or an item deleted meanwhile: its original is gone) changes nothing the participant sees.
          deps.logger.warn(
            { jobId: job.id, reason: error.message, detail: error.detail },
            'the 720p copy could not be made; the remuxed copy stays',
          );
          // Its faces were to be looked for in that copy: the public gets nothing of it, and the
          // administrators are told why (they may still record consent).
          if (!checksOff(deps.faces)) await announceNoPublicCopy(deps, data, `its converted copy could not be made (${error.message})`);
          return {
            evidenceId: data.evidenceId,
            revision: data.revision,
            status: 'failed',
            media_type: data.media_type,
            error: error.message,
            ...NO_DERIVATIVES,
          };
        }
        // The participant is told the reason; ffmpeg's words (paths included) go to the log only.
        deps.logger.warn({ jobId: job.id, reason: error.message, detail: error.detail }, 'media could not be processed');
        result = {
          evidenceId: data.evidenceId,
          revision: data.revision,
          status: 'failed',
          media_type: data.media_type,
          error: `The file could not be processed: ${error.message}`,
          ...NO_DERIVATIVES,
        };
      }
      const event = createEvent({ type: `media.${result.status}`, key: data.evidenceId, data: result });
      await keep('reporting the result', () => deps.bus.publish(TOPICS.media, [{ key: data.evidenceId, value: event }]));
      // Added after the first copy is announced, before this job completes: a worker that dies in
      // between runs this job again, which adds it then (the job id makes a second add a no-op).
      if (followUp) {
        const next = followUp;
        await keep('queueing the 720p copy', () =>
          deps.transcodeQueue!.add('transcode-video', next, {
            jobId: transcodeJobIdFor(next),
            attempts: 3,
            backoff: { type: 'exponential', delay: 5000 },
          }),
        );
      }
      deps.logger.info({ jobId: job.id, status: result.status, display: result.display_copy, ms: Date.now() - started }, 'media job done');
      return result;
    } finally {
      await rm(workDir, { recursive: true, force: true });
    }
  };
}

interface ProcessDeps extends MediaJobDeps {
  /** Runs a step that needs a dependency again while it is away (untilAvailable). */
  keep: Keep;
  /** Counts an ffmpeg run. */
  counted: (kind: FfmpegRunKind) => void;
}

async function process(
  deps: ProcessDeps,
  job: MediaJob,
  original: string,
  workDir: string,
  onProgress: (percent: number) => void,
  onStills: (stills: Stills) => Promise<void>,
): Promise<Derivatives> {
  const caps = deps.caps ?? mediaCapsFromEnv({});
  // The demuxer the upload check chose; anything else in a job (a playlist demuxer) is refused.
  if (job.demuxer !== undefined && !isMediaDemuxer(job.demuxer)) {
    throw new UnprocessableMediaError('the file is not a video or a recording the portal can read', `the job names demuxer ${job.demuxer}`);
  }
  const put = putUnder(deps.blobs, job.outputPrefix, deps.keep);

  if (job.media_type === MEDIA_TYPES.image) {
    const images = await stillImages(original).catch((error: unknown) => {
      const detail = (error as Error).message;
      throw new UnprocessableMediaError(
        /pixel limit/i.test(detail) ? 'the picture is over the pixel limit' : 'the image could not be decoded',
        detail,
      );
    });
    const checked = await checkPhoto(deps.faces, original, images, put);
    return {
      display: await put('display.webp', images.display, 'image/webp'),
      thumbnail: await put('thumb.webp', images.thumbnail, 'image/webp'),
      poster: null,
      placeholder: images.placeholder,
      width: images.width,
      height: images.height,
      duration: null,
      faces: checked.faces,
      public: checked.public,
    };
  }

  if (job.media_type === MEDIA_TYPES.video) {
    const probe = await probeMedia(original, { demuxer: job.demuxer ?? null }).catch((error: Error) => {
      throw new UnprocessableMediaError('the file is not a video the portal can read', error.message);
    });
    // A job queued again after a crash names no demuxer: the one ffprobe chose among the media
    // demuxers is used from here on.
    const demuxer = job.demuxer ?? MEDIA_DEMUXERS.find((name) => formatAgrees(probe.format.format_name, name)) ?? null;
    if (!demuxer || !formatAgrees(probe.format.format_name, demuxer)) {
      throw new UnprocessableMediaError('the file is not a video the portal can read', `ffprobe read it as ${probe.format.format_name}`);
    }
    const breach = capBreach(probe, 'video', caps);
    if (breach) throw new UnprocessableMediaError(lowerFirst(breach.message));
    const options = {
      demuxer,
      maxSeconds: caps.maxVideoSeconds,
      tooLong: lowerFirst(tooLongMessage('video', caps)),
      niceness: deps.ffmpegNiceness ?? 0,
      watchdog: deps.watchdog ?? DEFAULT_TRANSCODE_WATCHDOG,
    };

    /** The poster frame of a video (upright), its WebP poster and thumbnail stored, and its ThumbHash. */
    const stillsOf = async (video: string, seconds: number | null, from: Parameters<typeof posterFrame>[3]): Promise<Stills> => {
      deps.counted('poster');
      const poster = await stillImages(await posterFrame(video, seconds, workDir, { watchdog: options.watchdog, ...from }), 1280);
      return {
        thumbnail: await put('thumb.webp', poster.thumbnail, 'image/webp'),
        poster: await put('poster.webp', poster.display, 'image/webp'),
        placeholder: poster.placeholder,
      };
    };
    /** Poster first: the stills from the original, stored and announced before any display copy. */
    const stillsFromOriginal = async (): Promise<Stills> => {
      const stills = await stillsOf(original, probedSeconds(probe.format.duration), {
        demuxer,
        stream: chosenStreams(probe).video,
        niceness: options.niceness,
      });
      await onStills(stills);
      return stills;
    };

    const playable = job.step === undefined && deps.transcodePolicy === 'playable-first' ? playability(probe, demuxer) : null;
    if (playable?.playable) {
      const stills = await stillsFromOriginal();
      deps.counted('remux');
      const remuxed = await remuxVideo(original, probe, workDir, onProgress, options);
      const output = await probeMedia(remuxed, { demuxer: 'mov' });
      const size = shownSize(output.streams.find((s) => s.codec_type === 'video') ?? playable.video);
      return {
        display: await put(REMUXED_DISPLAY_NAME, remuxed, 'video/mp4'),
        ...stills,
        width: size.width,
        height: size.height,
        duration: durationOf(output),
        display_copy: 'remuxed',
        // Faces are looked for in the 720p copy; with FACE_BLUR=off there is nothing to wait for,
        // and the public may see this first copy at once (as before faces were checked).
        ...(checksOff(deps.faces) ? NOT_CHECKED : {}),
        followUp: { ...job, demuxer, step: 'transcode', stills },
      };
    }
    if (playable) deps.logger.info({ evidenceId: job.evidenceId, reason: playable.reason }, 'video transcoded before it is ready');

    // The second job of a remuxed video has the first job's stills. A video transcoded before it
    // is ready (HEVC, VP9, odd sound; every video under `always`) has its stills from the
    // original before the transcode starts; if no frame can be taken from the original (a seek
    // in a file without an index), from the transcoded copy afterwards, as before.
    const early =
      job.step === 'transcode'
        ? (job.stills ?? null)
        : await stillsFromOriginal().catch((error: unknown) => {
            if (!(error instanceof UnprocessableMediaError)) throw error;
            deps.logger.warn(
              { evidenceId: job.evidenceId, detail: error.detail },
              'no poster from the original; it is taken from the copy',
            );
            return null;
          });
    deps.counted('transcode');
    const video = await transcodeVideo(original, probe, workDir, onProgress, options);
    const output = await probeMedia(video, { demuxer: 'mov' });
    const duration = durationOf(output);
    const stream = output.streams.find((s) => s.codec_type === 'video');
    const stills = early ?? (await stillsOf(video, duration, {}));
    // The faces of the 720p copy (upright, the picture the public copy is made from), before the
    // copy is handed to the store.
    const checked = await checkVideo(
      deps.faces,
      video,
      stills.poster ? await blobBytes(deps.blobs, stills.poster.key) : null,
      videoPicture(output, duration),
      put,
      workDir,
      { niceness: options.niceness, allowedMs: allowanceMs(options.watchdog, duration) },
    );
    return {
      display: await put('display.mp4', video, 'video/mp4'),
      ...stills,
      width: stream?.width ?? null,
      height: stream?.height ?? null,
      duration,
      ...(job.step === 'transcode' ? { display_copy: 'transcoded' as const } : {}),
      faces: checked.faces,
      public: checked.public,
    };
  }

  // A recording is one ffmpeg process (see transcodeAudio); its length is what ffmpeg reports
  // having written.
  deps.counted('audio');
  const audio = await transcodeAudio(original, workDir, onProgress, {
    demuxer: job.demuxer ?? null,
    maxSeconds: caps.maxAudioSeconds,
    tooLong: lowerFirst(tooLongMessage('audio', caps)),
    niceness: deps.ffmpegNiceness ?? 0,
    watchdog: deps.watchdog ?? DEFAULT_TRANSCODE_WATCHDOG,
  });
  return {
    display: await put('display.m4a', audio.output, 'audio/mp4'),
    thumbnail: null,
    poster: null,
    placeholder: null,
    width: null,
    height: null,
    duration: roundedSeconds(audio.durationSeconds),
  };
}

/** Announces that an item's public copies could not be made (version 0: its first face check). */
async function announceNoPublicCopy(deps: MediaJobDeps, job: MediaJob, reason: string): Promise<void> {
  const data: MediaBlurredData = {
    evidenceId: job.evidenceId,
    revision: job.revision,
    version: 0,
    public: null,
    error: `The faces could not be looked for: ${reason}`,
  };
  await deps.bus.publish(TOPICS.media, [{ key: job.evidenceId, value: createEvent({ type: 'media.blurred', key: job.evidenceId, data }) }]);
}

/** A job's scratch folder, empty. */
async function freshWorkDir(deps: MediaJobDeps, jobId: string): Promise<string> {
  const workDir = join(deps.workRoot, jobId.replace(/[^A-Za-z0-9._-]/g, '_'));
  await rm(workDir, { recursive: true, force: true });
  await mkdir(workDir, { recursive: true });
  return workDir;
}

/**
 * Every media job of the queues: a blur job (public copies made again for changed regions, or the
 * first face check of an item processed before faces were checked) or the processing of a
 * revision (mediaJobHandler).
 */
export function mediaJobsHandler(deps: MediaJobDeps) {
  const processing = mediaJobHandler(deps);
  const blurring = blurJobHandler(deps);
  return (job: ActiveJob<MediaJob>): Promise<MediaProcessedData | MediaBlurredData> =>
    job.data.step === 'blur' || job.data.step === 'check-faces' ? blurring(job) : processing(job);
}

/** The blur jobs: public copies made again for a version of an item's regions, or a first face check (blurJob). */
export function blurJobHandler(deps: MediaJobDeps) {
  return async (job: ActiveJob<MediaJob>): Promise<MediaBlurredData> => {
    const workDir = await freshWorkDir(deps, job.id);
    try {
      return await blurJob(deps, job.data, workDir, job.id, Date.now());
    } finally {
      await rm(workDir, { recursive: true, force: true });
    }
  };
}

/** A step that needs a dependency, run again while it is away: the work done so far (ffmpeg's files) is kept. */
type Keep = <T>(what: string, work: () => Promise<T>) => Promise<T>;

function keeper(deps: Pick<MediaJobDeps, 'logger'>, jobId: string): Keep {
  return (what, work) => untilAvailable(work, { what: `${what} (job ${jobId})`, logger: deps.logger });
}

/**
 * Stores derivatives under a prefix: a Buffer, or a local file handed over whole; while the blob
 * store is away each is tried again (`keep`), so that what ffmpeg made is not made again.
 */
function putUnder(blobs: BlobStore, prefix: string, keep: Keep): PutBlob {
  return async (name, body, contentType) => {
    const key = `${prefix}${name}`;
    // A file (a display copy) is handed over whole: the file store links it into place instead of
    // copying it (a remuxed phone video is hundreds of MB; the copy was seconds of its job).
    await keep(`storing ${name}`, () =>
      typeof body === 'string' ? blobs.putFile(key, body, { contentType }) : blobs.put(key, body, { contentType }),
    );
    return { key, contentType };
  };
}

/** A small stored blob (a poster, a regions document) in memory; null when it is gone. */
async function blobBytes(blobs: BlobStore, key: string): Promise<Buffer | null> {
  const object = await blobs.get(key);
  return object ? buffer(object.body) : null;
}

/** What the face work needs of a 720p copy (upright: the transcode turned it). */
function videoPicture(probe: ProbeResult, duration: number | null): VideoPicture {
  const stream = probe.streams.find((s) => s.codec_type === 'video');
  const rate = stream?.avg_frame_rate && stream.avg_frame_rate !== '0/0' ? stream.avg_frame_rate : '30';
  return {
    width: stream?.width ?? 0,
    height: stream?.height ?? 0,
    frameRate: rate,
    hasAudio: probe.streams.some((s) => s.codec_type === 'audio'),
    duration,
  };
}

/** The watchdog's allowance for work on a video of this length (ms). */
function allowanceMs(watchdog: TranscodeWatchdog, duration: number | null): number {
  return (watchdog.factor * (duration ?? 60) + watchdog.slackSeconds) * 1000;
}

/**
 * The public copies of an item made again for a version of its regions an administrator changed
 * (step `blur`): a photo's from its original, a video's from its 720p copy and poster. Or the first
 * face check of an item processed before faces were checked (step `check-faces`): the same
 * checkPhoto and checkVideo as a new item's, on the same pictures, with no file processed again.
 * Reported as `media.blurred`; the evidence service takes it only while the item is at that
 * revision and version. A file that cannot be read any more ends as a report with the reason.
 */
async function blurJob(deps: MediaJobDeps, job: MediaJob, workDir: string, jobId: string, started: number): Promise<MediaBlurredData> {
  const keep = keeper(deps, jobId);
  const checking = job.step === 'check-faces';
  // A first check's report is version 0, as a new item's.
  const version = job.faces?.version ?? 0;
  const report = async (result: Omit<MediaBlurredData, 'evidenceId' | 'revision' | 'version'>): Promise<MediaBlurredData> => {
    const data: MediaBlurredData = { evidenceId: job.evidenceId, revision: job.revision, version, ...result };
    const event = createEvent({ type: 'media.blurred', key: job.evidenceId, data });
    await keep('reporting the public copies', () => deps.bus.publish(TOPICS.media, [{ key: job.evidenceId, value: event }]));
    deps.logger.info(
      {
        jobId,
        version: data.version,
        faces: data.faces?.count,
        blurred: data.public !== null,
        error: data.error,
        ms: Date.now() - started,
      },
      checking ? 'faces of an item from before the check looked for' : 'public copies made again',
    );
    return data;
  };
  let doc: FaceRegions | null = null;
  if (!checking) {
    if (!job.faces) throw new Error('a blur job names no regions');
    const regionsBytes = await blobBytes(deps.blobs, job.faces.key);
    const parsed = regionsBytes ? faceRegionsSchema.safeParse(JSON.parse(regionsBytes.toString('utf8'))) : null;
    if (!parsed?.success) return report({ public: null, error: 'The faces of this item could not be read' });
    doc = parsed.data;
  }
  const put = putUnder(deps.blobs, job.outputPrefix, keep);
  const timer = performance.now();
  try {
    if (job.media_type === MEDIA_TYPES.image) {
      const original = join(workDir, 'original');
      const object = await deps.blobs.get(job.originalKey);
      if (!object) return report({ public: null, error: 'The uploaded file is missing' });
      await pipeline(object.body, createWriteStream(original));
      if (!doc) return report({ error: null, ...(await checkPhoto(deps.faces, original, await uprightSize(original), put)) });
      const copies = await blurredPhotoCopies(original, doc, version, put);
      deps.faces?.observe?.('photo', 0, (performance.now() - timer) / 1000);
      return report({ public: copies, error: null });
    }
    const video = join(workDir, 'display.mp4');
    // A video's faces are looked for in its 720p copy; one that has only its first, remuxed copy
    // has none to look in (as a new video whose 720p copy could not be made).
    const converted = job.displayKey && !(checking && job.displayKey.endsWith(`/${REMUXED_DISPLAY_NAME}`));
    const object = converted ? await deps.blobs.get(job.displayKey!) : null;
    if (!object)
      return report({
        public: null,
        error: checking ? 'The faces could not be looked for: the video has no converted copy' : 'The video copy is missing',
      });
    await pipeline(object.body, createWriteStream(video));
    const probe = await probeMedia(video, { demuxer: 'mov' });
    const duration = durationOf(probe);
    const watchdog = deps.watchdog ?? DEFAULT_TRANSCODE_WATCHDOG;
    const poster = job.posterKey ? await blobBytes(deps.blobs, job.posterKey) : null;
    const run = { niceness: deps.ffmpegNiceness ?? 0, allowedMs: allowanceMs(watchdog, duration) };
    const picture = videoPicture(probe, duration);
    if (!doc) return report({ error: null, ...(await checkVideo(deps.faces, video, poster, picture, put, workDir, run)) });
    const copies = await blurredVideoCopies(video, poster, doc, version, picture, put, workDir, run);
    deps.faces?.observe?.('video', 0, (performance.now() - timer) / 1000);
    return report({ public: copies, error: null });
  } catch (error) {
    if (!(error instanceof UnprocessableMediaError)) throw error;
    deps.logger.warn({ jobId, reason: error.message, detail: error.detail }, 'public copies could not be made again');
    return report({ public: null, error: `The blurred copy could not be made: ${error.message}` });
  }
}

/** A photo's size upright (its EXIF orientation applied): what its regions are fractions of. */
async function uprightSize(file: string): Promise<{ width: number; height: number }> {
  const { autoOrient } = await pictureInput(file).metadata();
  return { width: autoOrient.width, height: autoOrient.height };
}

/** "Videos can be..." → "videos can be..." (after "The file could not be processed: "). */
function lowerFirst(text: string): string {
  return text.charAt(0).toLowerCase() + text.slice(1);
}

function durationOf(probe: ProbeResult): number | null {
  return roundedSeconds(probedSeconds(probe.format.duration));
}

function roundedSeconds(seconds: number | null): number | null {
  return seconds !== null && seconds > 0 ? Math.round(seconds * 100) / 100 : null;
}
