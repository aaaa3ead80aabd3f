import { join } from 'node:path';
import {
  faceBoxesAt,
  regionsInForce,
  type FaceBlurMode,
  type FaceRegions,
  type MediaProcessedData,
  type PublicCopies,
} from '@portal/contracts';
import { stillImages } from '../processing/still-images.js';
import { posterSeconds } from '../processing/video.js';
import type { FaceDetector } from './face-detector.js';
import { photoRegions } from './face-tracks.js';
import { facesInPicture, photoBoxes, pixelatedPicture } from './picture-faces.js';
import { blurredVideo, videoFaces, type VideoRunOptions } from './video-faces.js';

export interface FaceSettings {
  /** FACE_BLUR: `auto` finds and blurs faces in every public copy; `off` publishes pictures as they are. */
  mode: FaceBlurMode;
  /** FACE_MIN_CONFIDENCE: the detector's score from which a face counts (0-1). */
  minConfidence: number;
  /** FACE_VIDEO_SAMPLES_PER_SECOND: frames of a video handed to the detector each second (at least 4). */
  samplesPerSecond: number;
}

export interface FaceWork {
  settings: FaceSettings;
  detector: FaceDetector;
  /** Called once a picture or video has been checked: faces found, and the seconds the check and blur took. */
  observe?: (kind: 'photo' | 'video', faces: number, seconds: number) => void;
}

/** Stores a derivative under the job's prefix (a Buffer, or a local file handed over whole). */
export type PutBlob = (name: string, body: Buffer | string, contentType: string) => Promise<{ key: string; contentType: string }>;

export interface FaceOutcome {
  faces: NonNullable<MediaProcessedData['faces']>;
  public: PublicCopies | null;
}

/** What a check that was not made reports (FACE_BLUR=off, or no detector given). */
export const NOT_CHECKED: FaceOutcome = { faces: { check: 'off', key: null, count: 0 }, public: null };

/** True when faces are not looked for. */
export const checksOff = (work: FaceWork | undefined): work is undefined => !work || work.settings.mode === 'off';

/** The names of the public copies made for a version of an item's regions (0: the detector's). */
const blurredName = (version: number, name: string) => `blurred-v${version}-${name}`;

const stored = async (put: PutBlob, doc: FaceRegions) =>
  doc.regions.length > 0 ? (await put('faces.json', Buffer.from(JSON.stringify(doc)), 'application/json')).key : null;

/** A photo's public copies (display, thumbnail, placeholder) with the regions in force pixelated. */
export async function blurredPhotoCopies(original: string, doc: FaceRegions, version: number, put: PutBlob): Promise<PublicCopies | null> {
  if (regionsInForce(doc.regions).length === 0) return null;
  const images = await stillImages(await pixelatedPicture(original, photoBoxes(doc.regions), 1600));
  return {
    display: await put(blurredName(version, 'display.webp'), images.display, 'image/webp'),
    thumbnail: await put(blurredName(version, 'thumb.webp'), images.thumbnail, 'image/webp'),
    poster: null,
    placeholder: images.placeholder,
  };
}

/** The faces of a photo, and its public copies with them pixelated. */
export async function checkPhoto(
  work: FaceWork | undefined,
  original: string,
  shown: { width: number; height: number },
  put: PutBlob,
): Promise<FaceOutcome> {
  if (checksOff(work)) return NOT_CHECKED;
  const started = performance.now();
  const doc: FaceRegions = {
    width: shown.width,
    height: shown.height,
    duration: null,
    interval: null,
    regions: photoRegions(await facesInPicture(work.detector, original)),
  };
  const key = await stored(put, doc);
  const copies = await blurredPhotoCopies(original, doc, 0, put);
  work.observe?.('photo', doc.regions.length, (performance.now() - started) / 1000);
  return { faces: { check: 'done', key, count: doc.regions.length }, public: copies };
}

/** What the blur of a video needs to know of its 720p copy. */
export interface VideoPicture {
  width: number;
  height: number;
  frameRate: string;
  hasAudio: boolean;
  duration: number | null;
}

/**
 * A video's public copies: the 720p copy with the regions pixelated frame by frame, and its poster,
 * thumbnail and placeholder from the poster frame with the regions of that moment pixelated.
 */
export async function blurredVideoCopies(
  video: string,
  poster: Buffer | null,
  doc: FaceRegions,
  version: number,
  picture: VideoPicture,
  put: PutBlob,
  workDir: string,
  run: VideoRunOptions,
): Promise<PublicCopies | null> {
  if (regionsInForce(doc.regions).length === 0) return null;
  const interval = doc.interval ?? 0.25;
  const output = await blurredVideo(video, join(workDir, blurredName(version, 'display.mp4')), doc.regions, interval, picture, run);
  const display = await put(blurredName(version, 'display.mp4'), output, 'video/mp4');
  if (!poster) return { display, thumbnail: null, poster: null, placeholder: null };
  const boxes = faceBoxesAt(doc.regions, posterSeconds(picture.duration), interval);
  const stills = await stillImages(await pixelatedPicture(poster, boxes, 1280), 1280);
  return {
    display,
    thumbnail: await put(blurredName(version, 'thumb.webp'), stills.thumbnail, 'image/webp'),
    poster: await put(blurredName(version, 'poster.webp'), stills.display, 'image/webp'),
    placeholder: stills.placeholder,
  };
}

/** The faces of a video (its upright 720p copy), followed from sample to sample, and its public copies. */
export async function checkVideo(
  work: FaceWork | undefined,
  video: string,
  poster: Buffer | null,
  picture: VideoPicture,
  put: PutBlob,
  workDir: string,
  run: VideoRunOptions,
): Promise<FaceOutcome> {
  if (checksOff(work)) return NOT_CHECKED;
  const started = performance.now();
  const found = await videoFaces(work.detector, video, picture, work.settings.samplesPerSecond, run);
  const doc: FaceRegions = {
    width: picture.width,
    height: picture.height,
    duration: picture.duration,
    interval: found.interval,
    regions: found.regions,
  };
  const key = await stored(put, doc);
  const copies = await blurredVideoCopies(video, poster, doc, 0, picture, put, workDir, run);
  work.observe?.('video', doc.regions.length, (performance.now() - started) / 1000);
  return { faces: { check: 'done', key, count: doc.regions.length }, public: copies };
}
