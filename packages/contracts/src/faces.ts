import { z } from 'zod';

/**
 * Faces in evidence: where they are (regions), and the rules every part of the portal uses to
 * decide what a face covers at a moment of a video and how far the public copy's blur reaches.
 * Coordinates are fractions (0 to 1) of the upright picture, so the same region fits the
 * original, the display copy, the poster and the 720p copy.
 */

const fraction = z.number().min(0).max(1);

/** A rectangle on the upright picture, in fractions of its width and height. */
export const faceBoxSchema = z
  .object({ x: fraction, y: fraction, w: fraction.positive(), h: fraction.positive() })
  .refine((box) => box.x + box.w <= 1.0001 && box.y + box.h <= 1.0001, 'A box must lie inside the picture')
  .meta({ id: 'FaceBox' });
export type FaceBox = { x: number; y: number; w: number; h: number };

/** One position of a face at a moment of a video (t, seconds); a photo's regions have one, at 0. */
export const faceKeyframeSchema = z.object({ t: z.number().min(0), x: fraction, y: fraction, w: fraction, h: fraction });
export type FaceKeyframe = z.infer<typeof faceKeyframeSchema>;

export const FACE_REGION_SOURCES = ['detected', 'added'] as const;

/**
 * A face: found by the detector (a photo's face, or a video's face followed from sample to sample)
 * or added by an administrator. `removed`: an administrator said it is no face to hide (a poster on
 * a wall); it stays listed so the decision can be undone.
 */
export const faceRegionSchema = z
  .object({
    id: z.string().max(40),
    source: z.enum(FACE_REGION_SOURCES),
    score: z.number().min(0).max(1).nullable().meta({ description: "The detector's confidence (its best over a video); null when added" }),
    removed: z.boolean(),
    track: z
      .array(faceKeyframeSchema)
      .min(1)
      .meta({
        description:
          'Positions in time order. A photo has one. A detected video face is covered from one sample interval before its first ' +
          'position to one after its last, between two positions by a box holding both; a region added by an administrator has one ' +
          'position and covers the whole video.',
      }),
  })
  .meta({ id: 'FaceRegion' });
export type FaceRegion = z.infer<typeof faceRegionSchema>;

/** The faces of one revision of an item's media, as the media worker stores them (a JSON blob). */
export const faceRegionsSchema = z.object({
  /** The picture the fractions refer to (upright), in pixels. */
  width: z.number().int().positive(),
  height: z.number().int().positive(),
  /** A video's length (seconds); null for a photo. */
  duration: z.number().nullable(),
  /** Seconds between two video samples; null for a photo. */
  interval: z.number().positive().nullable(),
  regions: z.array(faceRegionSchema),
});
export type FaceRegions = z.infer<typeof faceRegionsSchema>;

/**
 * How far a face box is enlarged before it is blurred: a detector's box runs from the brows to
 * the chin, so the blurred area reaches up over the hair, down past the chin and out to the ears.
 */
export const FACE_MARGINS = { side: 0.3, top: 0.5, bottom: 0.3 } as const;

/** A box enlarged by FACE_MARGINS, kept inside the picture. */
export function enlargedFaceBox(box: FaceBox): FaceBox {
  const x = Math.max(0, box.x - box.w * FACE_MARGINS.side);
  const y = Math.max(0, box.y - box.h * FACE_MARGINS.top);
  const right = Math.min(1, box.x + box.w * (1 + FACE_MARGINS.side));
  const bottom = Math.min(1, box.y + box.h * (1 + FACE_MARGINS.bottom));
  return { x, y, w: right - x, h: bottom - y };
}

/** The smallest box holding both. */
export function boxUnion(a: FaceBox, b: FaceBox): FaceBox {
  const x = Math.min(a.x, b.x);
  const y = Math.min(a.y, b.y);
  return { x, y, w: Math.max(a.x + a.w, b.x + b.w) - x, h: Math.max(a.y + a.h, b.y + b.h) - y };
}

/** Intersection over union of two boxes (0: apart, 1: the same). */
export function boxOverlap(a: FaceBox, b: FaceBox): number {
  const w = Math.min(a.x + a.w, b.x + b.w) - Math.max(a.x, b.x);
  const h = Math.min(a.y + a.h, b.y + b.h) - Math.max(a.y, b.y);
  if (w <= 0 || h <= 0) return 0;
  const inter = w * h;
  return inter / (a.w * a.h + b.w * b.h - inter);
}

/** The regions that are hidden in public copies: every one an administrator did not remove. */
export function regionsInForce(regions: readonly FaceRegion[]): FaceRegion[] {
  return regions.filter((region) => !region.removed);
}

/**
 * The boxes (not yet enlarged) a set of regions covers at second `t` of a video sampled every
 * `interval` seconds (a photo: t = 0, interval null). A detected face is covered from one interval
 * before its first position to one interval after its last; between two positions, by the box
 * holding both, so a face walking between two samples stays covered all the way. A region with
 * one position that was added by an administrator covers the whole video.
 */
export function faceBoxesAt(regions: readonly FaceRegion[], t: number, interval: number | null): FaceBox[] {
  const boxes: FaceBox[] = [];
  for (const region of regionsInForce(regions)) {
    const track = region.track;
    if (interval === null || (region.source === 'added' && track.length === 1)) {
      boxes.push(track[0]!);
      continue;
    }
    const first = track[0]!;
    const last = track[track.length - 1]!;
    if (t < first.t - interval || t > last.t + interval) continue;
    if (t <= first.t) boxes.push(first);
    else if (t >= last.t) boxes.push(last);
    else {
      const next = track.findIndex((point) => point.t >= t);
      boxes.push(boxUnion(track[next - 1]!, track[next]!));
    }
  }
  return boxes;
}

/** FACE_BLUR: `auto` finds and blurs faces in every public copy; `off` publishes pictures as they are. */
export const FACE_BLUR_MODES = ['auto', 'off'] as const;
export type FaceBlurMode = (typeof FACE_BLUR_MODES)[number];

/** The FACE_BLUR setting, read alike by the media worker and the evidence service (which has older items checked). */
export const faceBlurEnv = z.enum(FACE_BLUR_MODES, { message: `FACE_BLUR must be ${FACE_BLUR_MODES.join(' or ')}` }).default('auto');

// --- the administrators' routes ---------------------------------------------------------------

export const FACE_CHECKS = ['pending', 'done', 'off', 'failed'] as const;
export type FaceCheck = (typeof FACE_CHECKS)[number];

/** An item's faces as the review dialog shows them (GET /api/evidence/{id}/faces, administrators). */
export const evidenceFacesSchema = z
  .object({
    check: z
      .enum(FACE_CHECKS)
      .nullable()
      .meta({
        description:
          '`pending`: the detector has not finished; `done`: checked; `off`: not checked (FACE_BLUR=off when it was processed); ' +
          '`failed`: could not be checked (a video whose converted copy could not be made: the public gets nothing of it without consent); ' +
          'null: no picture (notes, audio) or processed before faces were checked',
      }),
    version: z.number().int().meta({ description: 'Grows with every change of the regions; send it back as `base` when changing them' }),
    consent: z
      .boolean()
      .meta({ description: 'An administrator recorded that the faces may be shown: the public sees the picture as it is' }),
    public_copy: z.enum(['pending', 'plain', 'blurred']).meta({
      description: 'What the public is given once the item is published: nothing yet, the picture as it is, or the blurred copy',
    }),
    width: z.number().int().nullable(),
    height: z.number().int().nullable(),
    duration: z.number().nullable(),
    interval: z.number().nullable(),
    regions: z.array(faceRegionSchema),
  })
  .meta({ id: 'EvidenceFaces' });
export type EvidenceFaces = z.infer<typeof evidenceFacesSchema>;

/** The most boxes an administrator may add to one item. */
export const MAX_ADDED_FACES = 200;

/** PUT /api/evidence/{id}/faces: remove or restore regions and add boxes, on the version seen. */
export const editFacesRequestSchema = z
  .object(
    {
      base: z.number({ error: 'base must be the version of the faces you edited' }).int().min(0),
      removed: z.array(z.string().max(40)).max(1000).default([]).meta({ description: 'Ids of regions that are no face to hide' }),
      restored: z.array(z.string().max(40)).max(1000).default([]).meta({ description: 'Ids of removed regions to hide again' }),
      added: z
        .array(faceBoxSchema, { error: 'added must be a list of boxes' })
        .max(MAX_ADDED_FACES, `At most ${MAX_ADDED_FACES} boxes can be added`)
        .default([])
        .meta({ description: 'Boxes to hide (on a video: for its whole length)' }),
    },
    { error: 'Send a JSON object with base, removed, restored and added' },
  )
  .meta({ id: 'EditFacesRequest' });
export type EditFacesRequest = z.input<typeof editFacesRequestSchema>;

/** PUT /api/evidence/{id}/faces/consent: the faces may be shown (consent on record), or not. */
export const facesConsentRequestSchema = z
  .object(
    {
      consent: z.boolean({ error: 'consent must be true or false' }),
      note: z
        .string({ error: 'note must be text' })
        .trim()
        .max(500, 'The note can be at most 500 characters long')
        .optional()
        .meta({ description: 'Where the consent is on record (e.g. "signed release, box office file 12"); kept in the audit log' }),
    },
    { error: 'Send a JSON object with consent' },
  )
  .meta({ id: 'FacesConsentRequest' });
