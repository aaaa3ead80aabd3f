import { z } from 'zod';
import { FACE_CHECKS } from './faces.js';
import { MESSAGES } from './messages.js';

/** 1 = text only, 2 = image, 3 = video, 4 = audio (SPEC section 3). */
export const MEDIA_TYPES = { note: 1, image: 2, video: 3, audio: 4 } as const;
export type MediaType = 1 | 2 | 3 | 4;
export const mediaTypeSchema = z.union([z.literal(1), z.literal(2), z.literal(3), z.literal(4)]);

export const DEFAULT_EVIDENCE_TITLE = 'Supporting Evidence';
export const TITLE_MAX_LENGTH = 120;
export const NOTES_MAX_LENGTH = 5000;
export const LOCATION_MAX_LENGTH = 200;

/** Where an item's media is in the pipeline. Notes have no media ('none'). */
export const MEDIA_STATUSES = ['none', 'processing', 'ready', 'failed'] as const;
export type MediaStatus = (typeof MEDIA_STATUSES)[number];

/**
 * Where an item is in moderation: `new` until an administrator publishes, unpublishes or marks it
 * reviewed; a participant's own edit of an item sends it back to `new`.
 */
export const REVIEW_STATUSES = ['new', 'reviewed'] as const;
export type ReviewStatus = (typeof REVIEW_STATUSES)[number];

const UUID_PATTERN = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** Decimals of a device position in public answers unless PUBLIC_LOCATION_DECIMALS says otherwise (3: about 100 m). */
export const DEFAULT_PUBLIC_LOCATION_DECIMALS = 3;

/** Metres of one unit of the last decimal kept (a degree of latitude is about 111 320 m). */
export function publicLocationMetres(decimals: number): number {
  return Math.round(111_320 * 10 ** -decimals);
}

/** The most ids one call of the selected-items routes takes. */
export const MAX_SELECTED_IDS = 500;
/** The longest search text (q) the lists take. */
export const SEARCH_MAX_LENGTH = 200;

export const titleField = z
  .string({ error: MESSAGES.titleRequired })
  .trim()
  .min(1, MESSAGES.titleRequired)
  .max(TITLE_MAX_LENGTH, `The title can be at most ${TITLE_MAX_LENGTH} characters long`);
export const notesField = z.string().max(NOTES_MAX_LENGTH, `Notes can be at most ${NOTES_MAX_LENGTH} characters long`).default('');
export const locationField = z
  .string()
  .trim()
  .max(LOCATION_MAX_LENGTH, `The location can be at most ${LOCATION_MAX_LENGTH} characters long`)
  .optional()
  .transform((value) => (value ? value : null))
  .meta({ description: 'Where it was recorded, e.g. "40.71280, -74.00600 (±15 m)"; empty when unknown' });

/** POST /api/evidence, and the metadata of a resumable upload. */
export const createEvidenceSchema = z
  .object({ title: titleField, notes: notesField, location: locationField })
  .meta({ id: 'CreateEvidence' });
export type CreateEvidence = z.input<typeof createEvidenceSchema>;

/**
 * The client's name for one piece of evidence (the web app's outbox makes one per capture): sent
 * as the Idempotency-Key header of POST /api/evidence or the idempotencyKey metadata of a
 * resumable upload, so that sending the same capture again answers the item already made.
 */
export const idempotencyKeyField = z
  .string()
  .regex(/^[A-Za-z0-9._:-]{8,100}$/, 'The idempotency key must be 8 to 100 letters, digits, dots, colons, dashes or underscores')
  .meta({ description: 'The same key for the same piece of evidence: a repeat answers the item already made' });
export const IDEMPOTENCY_KEY_HEADER = 'idempotency-key';

/** PUT /api/evidence/update/{id} (multipart; an optional replacement file beside). */
export const updateEvidenceSchema = z.object({ title: titleField, notes: notesField }).meta({ id: 'UpdateEvidence' });
export type UpdateEvidence = z.input<typeof updateEvidenceSchema>;

export const evidenceSchema = z
  .object({
    id: z.string(),
    title: z.string(),
    notes: z.string(),
    location: z.string().nullable(),
    media_type: mediaTypeSchema,
    aws_url: z.string().nullable().meta({
      description:
        'The playable/displayable media (WebP image, H.264 MP4 video, AAC M4A audio); null for notes and until processing is done',
    }),
    thumbnail_url: z.string().nullable().meta({ description: "A small WebP picture: the photo, or a video's poster frame" }),
    poster_url: z.string().nullable().meta({ description: "A video's poster frame at display size" }),
    placeholder: z.string().nullable().meta({ description: 'ThumbHash (base64) to draw while the thumbnail loads' }),
    width: z.number().int().nullable(),
    height: z.number().int().nullable(),
    duration: z.number().nullable().meta({ description: 'Seconds, for video and audio' }),
    media_status: z.enum(MEDIA_STATUSES),
    media_error: z.string().nullable().meta({ description: 'Why processing failed, in words' }),
    is_public: z.boolean(),
    faces: z
      .object({
        check: z.enum(FACE_CHECKS).nullable(),
        count: z.number().int().nullable().meta({ description: 'Faces hidden in the public copy (null until checked)' }),
        consent: z.boolean().meta({ description: 'An administrator recorded that the faces may be shown' }),
        public_copy: z.enum(['pending', 'plain', 'blurred']),
      })
      .nullable()
      .meta({
        description:
          'Faces in the picture and what the public is given (owner and administrators); null for notes and audio, and in public answers',
      }),
    review_status: z
      .enum(REVIEW_STATUSES)
      .meta({ description: '`new` until an administrator publishes, unpublishes or marks it reviewed' }),
    date_posted: z.string().meta({ format: 'date-time' }),
    user_id: z.string(),
    username: z.string(),
    avatar_AWS_URL: z.string().nullable().meta({
      description:
        "The author's avatar for the item's owner and administrators; always null in the public's copy (the archive shows no avatar)",
    }),
  })
  .meta({ id: 'Evidence' });
export type Evidence = z.infer<typeof evidenceSchema>;

export const evidenceListQuerySchema = z.object({
  type: z.coerce
    .number({ error: 'type must be 1, 2, 3 or 4' })
    .pipe(mediaTypeSchema)
    .optional()
    .meta({ description: 'Only this media type (1 notes, 2 photos, 3 videos, 4 audio)' }),
  limit: z.coerce
    .number({ error: 'limit must be a number from 1 to 100' })
    .int('limit must be a number from 1 to 100')
    .min(1, 'limit must be a number from 1 to 100')
    .max(100, 'limit must be a number from 1 to 100')
    .default(24),
  cursor: z.string().max(300).optional().meta({ description: 'Opaque cursor from the rel="next" Link header' }),
  q: z
    .string({ error: 'q must be text' })
    .trim()
    .max(SEARCH_MAX_LENGTH, `The search can be at most ${SEARCH_MAX_LENGTH} characters long`)
    .optional()
    .transform((value) => (value ? value : undefined))
    .meta({
      description:
        'Words to find in titles and notes: every word must start a word of the title or notes (case and accents ignored); ' +
        'punctuation is ignored, and a search without letters or digits matches everything',
    }),
});
export type EvidenceListQuery = z.infer<typeof evidenceListQuerySchema>;

/** GET /api/evidence/admin: the list filters, and the moderation ones. */
export const adminEvidenceListQuerySchema = evidenceListQuerySchema.extend({
  review_status: z
    .enum(REVIEW_STATUSES, { error: 'review_status must be new or reviewed' })
    .optional()
    .meta({ description: 'Only items in this review state (`new`: the review queue)' }),
  visibility: z
    .enum(['public', 'private'], { error: 'visibility must be public or private' })
    .optional()
    .meta({ description: 'Only public, or only private, items' }),
});
export type AdminEvidenceListQuery = z.infer<typeof adminEvidenceListQuerySchema>;

/** GET /api/evidence/admin/counts: the review queue and the archive at a glance. */
export const evidenceCountsSchema = z
  .object({
    new: z.number().int().meta({ description: 'Items waiting for review' }),
    public: z.number().int(),
    private: z.number().int(),
    total: z.number().int(),
  })
  .meta({ id: 'EvidenceCounts' });
export type EvidenceCounts = z.infer<typeof evidenceCountsSchema>;

const selectedIds = z
  .array(z.string({ error: 'Each id must be an evidence id' }).regex(UUID_PATTERN, 'Each id must be an evidence id'), {
    error: 'ids must be a list of evidence ids',
  })
  .min(1, 'Choose at least one item')
  .max(MAX_SELECTED_IDS, `At most ${MAX_SELECTED_IDS} items can be changed at once`)
  .transform((ids) => [...new Set(ids.map((id) => id.toLowerCase()))]);

/** PUT /api/evidence/visibility: publish or unpublish the chosen items. */
export const selectedVisibilityRequestSchema = z
  .object(
    {
      ids: selectedIds,
      is_public: z.boolean({ error: 'is_public must be true or false' }),
    },
    { error: 'Send a JSON object with ids and is_public' },
  )
  .meta({ id: 'SelectedVisibilityRequest' });
export type SelectedVisibilityRequest = z.input<typeof selectedVisibilityRequestSchema>;

export const selectedVisibilityResponseSchema = z
  .object({
    ok: z.literal(true),
    is_public: z.boolean(),
    changed: z.array(z.string()).meta({ description: 'Items whose visibility changed (one evidence.visibility-changed event each)' }),
    unchanged: z.array(z.string()).meta({ description: 'Items that already had this visibility (now marked reviewed)' }),
    not_found: z.array(z.string()).meta({ description: 'Ids of no item; nothing was done for them' }),
  })
  .meta({ id: 'SelectedVisibility' });
export type SelectedVisibility = z.infer<typeof selectedVisibilityResponseSchema>;

/** PUT /api/evidence/review: mark the chosen items reviewed without changing their visibility. */
export const markReviewedRequestSchema = z
  .object({ ids: selectedIds }, { error: 'Send a JSON object with ids' })
  .meta({ id: 'MarkReviewedRequest' });
export type MarkReviewedRequest = z.input<typeof markReviewedRequestSchema>;

export const markReviewedResponseSchema = z
  .object({
    ok: z.literal(true),
    reviewed: z.array(z.string()).meta({ description: 'Items that were new and are reviewed now (one evidence.reviewed event each)' }),
    unchanged: z.array(z.string()).meta({ description: 'Items that were reviewed already' }),
    not_found: z.array(z.string()).meta({ description: 'Ids of no item' }),
  })
  .meta({ id: 'MarkReviewed' });
export type MarkReviewed = z.infer<typeof markReviewedResponseSchema>;

export const bulkVisibilityResponseSchema = z
  .object({ ok: z.literal(true), changed: z.number().int(), is_public: z.boolean() })
  .meta({ id: 'BulkVisibility' });

// --- events -------------------------------------------------------------------------------

export const evidenceChangedData = z.object({
  evidenceId: z.string(),
  userId: z.string(),
  media_type: mediaTypeSchema,
  is_public: z.boolean(),
  title: z.string(),
});
export const evidenceDeletedData = z.object({ evidenceId: z.string(), userId: z.string() });
export const evidenceVisibilityData = z.object({
  evidenceId: z.string().nullable().meta({ description: 'null when every item changed at once' }),
  is_public: z.boolean(),
  changed: z.number().int(),
});
export const evidenceReviewedData = z.object({ evidenceId: z.string(), review_status: z.enum(REVIEW_STATUSES) });
export type EvidenceReviewedData = z.infer<typeof evidenceReviewedData>;
export type EvidenceChangedData = z.infer<typeof evidenceChangedData>;
export type EvidenceDeletedData = z.infer<typeof evidenceDeletedData>;
export type EvidenceVisibilityData = z.infer<typeof evidenceVisibilityData>;

/** The public copies of a picture or video with its faces blurred. */
export const publicCopiesSchema = z.object({
  display: z.object({ key: z.string(), contentType: z.string() }),
  thumbnail: z.object({ key: z.string(), contentType: z.string() }).nullable(),
  poster: z.object({ key: z.string(), contentType: z.string() }).nullable(),
  placeholder: z.string().nullable(),
});
export type PublicCopies = z.infer<typeof publicCopiesSchema>;

/** What the media worker reports back about one revision of an item's media. */
export const mediaProcessedData = z.object({
  evidenceId: z.string(),
  revision: z.number().int(),
  status: z.enum(['ready', 'failed']),
  media_type: mediaTypeSchema,
  error: z.string().nullable(),
  display: z.object({ key: z.string(), contentType: z.string() }).nullable(),
  thumbnail: z.object({ key: z.string(), contentType: z.string() }).nullable(),
  poster: z.object({ key: z.string(), contentType: z.string() }).nullable(),
  placeholder: z.string().nullable(),
  width: z.number().int().nullable(),
  height: z.number().int().nullable(),
  duration: z.number().nullable(),
  /**
   * Which display copy a ready video result carries: `remuxed` (the original's own streams in a
   * new MP4, made in seconds; the 720p copy follows and replaces it) or `transcoded` (the 720p
   * copy). Absent: the only copy there will be (photos, recordings, results of older workers).
   */
  display_copy: z.enum(['remuxed', 'transcoded']).optional(),
  /**
   * The face check of this revision, when the result carries it (a photo's result, a video's
   * 720p copy): the regions stored as JSON (`key`, null when none was found or the check was off)
   * and how many, and the public copies made with every face blurred (`public`, null when there
   * was nothing to blur). Absent: not checked yet (a video's first, remuxed copy).
   */
  faces: z
    .object({
      check: z.enum(['done', 'off']),
      key: z.string().nullable(),
      count: z.number().int(),
    })
    .optional(),
  public: publicCopiesSchema.nullable().optional(),
});
export type MediaProcessedData = z.infer<typeof mediaProcessedData>;

/**
 * The poster frame, thumbnail and placeholder of a video whose display copy is still being made
 * (event `media.stills`, before its `media.ready`): taken from the original first, so lists and
 * the review queue show a picture while a transcode takes minutes. Applied only while the item
 * has no display copy; the ready result that follows carries the same stills.
 */
export const mediaStillsData = z.object({
  evidenceId: z.string(),
  revision: z.number().int(),
  media_type: mediaTypeSchema,
  thumbnail: z.object({ key: z.string(), contentType: z.string() }),
  poster: z.object({ key: z.string(), contentType: z.string() }),
  placeholder: z.string().nullable(),
});
export type MediaStillsData = z.infer<typeof mediaStillsData>;

/**
 * The file name of a video's first display copy (a remux of the original's streams) under its
 * revision's prefix, beside the 720p `display.mp4` that replaces it.
 */
export const REMUXED_DISPLAY_NAME = 'display-remuxed.mp4';

/** The derivative fields of a media result that produced nothing (a failure). */
export const NO_DERIVATIVES = {
  display: null,
  thumbnail: null,
  poster: null,
  placeholder: null,
  width: null,
  height: null,
  duration: null,
} as const satisfies Partial<MediaProcessedData>;

/**
 * The public copies remade after an administrator changed the faces of an item (event
 * `media.blurred`), for that version of its regions; `public` null when nothing is left to blur,
 * `error` when they could not be made. The first check of an item processed before faces were
 * checked (a `check-faces` job) reports here too, version 0, with its outcome in `faces`.
 */
export const mediaBlurredData = z.object({
  evidenceId: z.string(),
  revision: z.number().int(),
  version: z.number().int(),
  public: publicCopiesSchema.nullable(),
  error: z.string().nullable(),
  faces: mediaProcessedData.shape.faces,
});
export type MediaBlurredData = z.infer<typeof mediaBlurredData>;

/** The media job the evidence service gives the worker. */
export const mediaJobSchema = z.object({
  evidenceId: z.string(),
  revision: z.number().int(),
  media_type: mediaTypeSchema,
  originalKey: z.string(),
  /** Where the derivatives go: <prefix>display.*, <prefix>thumb.webp, <prefix>poster.webp */
  outputPrefix: z.string(),
  /**
   * The ffmpeg demuxer the upload check read the file with (e.g. "mov", "matroska"); the worker
   * reads it with that one and no other. Absent for pictures and for jobs queued again after a
   * crash.
   */
  demuxer: z.string().optional(),
  /**
   * `transcode`: the second job of a video whose first display copy was a remux: make the 720p
   * copy only, and report it with the poster, thumbnail and placeholder the first job made
   * (`stills`). `blur`: the public copies made again for changed regions (`faces`).
   * `check-faces`: the first face check of an item processed before faces were checked, on its
   * original (a photo) or its 720p copy (`displayKey`, a video; its poster `posterKey`), with
   * its public copies; reported as `media.blurred`. Absent: the whole job (every derivative).
   */
  step: z.enum(['transcode', 'blur', 'check-faces']).optional(),
  /**
   * `blur` only: the regions to hide (a JSON blob of FaceRegions) and their version; the public
   * copies are made again from the original (a photo) or the 720p copy (`displayKey`, a video)
   * and its poster (`posterKey`).
   */
  faces: z.object({ key: z.string(), version: z.number().int() }).optional(),
  displayKey: z.string().optional(),
  posterKey: z.string().optional(),
  stills: z
    .object({
      thumbnail: z.object({ key: z.string(), contentType: z.string() }).nullable(),
      poster: z.object({ key: z.string(), contentType: z.string() }).nullable(),
      placeholder: z.string().nullable(),
    })
    .optional(),
});
export type MediaJob = z.infer<typeof mediaJobSchema>;

// --- internal: a participant's data export -------------------------------------------------

/** One file of an item in a participant's data export. */
export const exportedFileSchema = z.object({
  variant: z.enum(['original', 'display', 'thumb', 'poster']),
  /** The file's name inside the item's folder of the archive, e.g. original.mp4. */
  name: z.string(),
  contentType: z.string(),
  size: z.number().int(),
});
export type ExportedFile = z.infer<typeof exportedFileSchema>;

/** GET /internal/users/{id}/evidence (evidence → identity): every stored field of every item. */
export const evidenceExportSchema = z.object({
  items: z.array(z.object({ record: z.looseObject({ id: z.string() }), files: z.array(exportedFileSchema) })),
});
export type EvidenceExport = z.infer<typeof evidenceExportSchema>;
