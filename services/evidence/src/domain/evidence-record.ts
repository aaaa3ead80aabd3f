import {
  MEDIA_TYPES,
  REMUXED_DISPLAY_NAME,
  type Evidence,
  type FaceCheck,
  type MediaProcessedData,
  type MediaStatus,
  type PublicCopies,
  type MediaType,
  type ReviewStatus,
} from '@portal/contracts';
import { coarsenLocation } from './public-location.js';

/** An evidence item as the evidence service stores it. */
export interface EvidenceRecord {
  id: string;
  user_id: string;
  /** Copies of the author's username and avatar, kept current from user.updated events. */
  username: string;
  avatar_url: string | null;
  title: string;
  notes: string;
  location: string | null;
  media_type: MediaType;
  is_public: boolean;
  /** `new` until an administrator publishes, unpublishes or marks it reviewed. */
  review_status: ReviewStatus;
  date_posted: string;
  updated_at: string;
  media_status: MediaStatus;
  media_error: string | null;
  /** Grows with every new file, so that a late result of an old file is ignored and URLs change. */
  media_revision: number;
  original_key: string | null;
  original_type: string | null;
  original_size: number | null;
  display_key: string | null;
  display_type: string | null;
  thumb_key: string | null;
  poster_key: string | null;
  placeholder: string | null;
  width: number | null;
  height: number | null;
  duration: number | null;
  /**
   * The face check of the current revision: `pending` until the media worker has looked (a video:
   * until its 720p copy), `done`, `off` (FACE_BLUR=off then); null for notes, audio and items
   * processed before faces were checked.
   */
  face_check: FaceCheck | null;
  /** Regions in force (hidden in the public copy); null until checked. */
  face_count: number | null;
  /** The regions (a FaceRegions JSON blob): the detector's, or the version an administrator made. */
  faces_key: string | null;
  /** Grows with every administrator's change of the regions; public copies are made for one version. */
  faces_version: number;
  /** An administrator recorded that the faces may be shown: the public gets the picture as it is. */
  faces_consent: boolean;
  /**
   * The blurred public copies for the regions in force: `pending` while they are made (or made
   * again after a box was added: the public sees nothing meanwhile), `ready`, or `none` (nothing to
   * blur: no face, FACE_BLUR=off, notes, audio, items from before faces were checked).
   */
  public_blur: PublicBlur;
  public_display_key: string | null;
  public_thumb_key: string | null;
  public_poster_key: string | null;
  public_placeholder: string | null;
}

export const PUBLIC_BLURS = ['pending', 'none', 'ready'] as const;
export type PublicBlur = (typeof PUBLIC_BLURS)[number];

/** What the public is given of an item's picture: nothing yet, the picture as it is, or the blurred copies. */
export type PublicCopy = 'pending' | 'plain' | 'blurred';

/**
 * The one rule for what the public sees of an item's picture. Consent on record shows it as it is;
 * otherwise the blurred copies once made, the picture as it is when nothing needs blurring, and
 * nothing while the faces are being looked for or a blurred copy is being made again.
 */
export function publicCopyOf(record: Pick<EvidenceRecord, 'faces_consent' | 'public_blur'>): PublicCopy {
  if (record.faces_consent || record.public_blur === 'none') return 'plain';
  return record.public_blur === 'ready' ? 'blurred' : 'pending';
}

/** Whether the public may see the item now: published, its media ready (or a note), and its public copy made. */
export function isPubliclyShown(record: EvidenceRecord): boolean {
  return record.is_public && (record.media_status === 'ready' || record.media_status === 'none') && publicCopyOf(record) !== 'pending';
}

/** An item's blurred public copies: none yet. */
export const NO_PUBLIC_COPIES = {
  public_display_key: null,
  public_thumb_key: null,
  public_poster_key: null,
  public_placeholder: null,
} as const satisfies Partial<EvidenceRecord>;

/** The face fields of an item before its picture is checked: photos and videos wait for the check, the rest have nothing to check. */
export function uncheckedFaces(mediaType: MediaType) {
  const picture = mediaType === MEDIA_TYPES.image || mediaType === MEDIA_TYPES.video;
  return {
    face_check: picture ? ('pending' as const) : null,
    face_count: null,
    faces_key: null,
    faces_consent: false,
    public_blur: picture ? ('pending' as const) : ('none' as const),
    ...NO_PUBLIC_COPIES,
  } satisfies Partial<EvidenceRecord>;
}

/**
 * The face fields a first check sets (a new item's result, or the check of one processed before
 * faces were checked): the regions found, and the public copies when there is a face to hide.
 */
export function faceCheckOutcome(
  faces: NonNullable<MediaProcessedData['faces']>,
  copies: PublicCopies | null | undefined,
): EvidenceChanges {
  const found = faces.check === 'done' && faces.count > 0 && copies ? copies : null;
  return {
    face_check: faces.check,
    face_count: faces.check === 'done' ? faces.count : null,
    faces_key: faces.key,
    ...publicCopyFields(found),
  };
}

/** The public copy fields for blurred copies just made (`ready`), or for none needed (`none`). */
export function publicCopyFields(copies: PublicCopies | null | undefined): EvidenceChanges {
  return {
    public_blur: copies ? 'ready' : 'none',
    public_display_key: copies?.display.key ?? null,
    public_thumb_key: copies?.thumbnail?.key ?? null,
    public_poster_key: copies?.poster?.key ?? null,
    public_placeholder: copies?.placeholder ?? null,
  };
}

/** What processing derives from an item's original file: nothing yet (a new file clears it). */
export const NO_PROCESSED_MEDIA = {
  display_key: null,
  display_type: null,
  thumb_key: null,
  poster_key: null,
  placeholder: null,
  width: null,
  height: null,
  duration: null,
} as const satisfies Partial<EvidenceRecord>;

/** The media fields of an item without a file (a note, or an item before its file is stored). */
export const NO_MEDIA = {
  original_key: null,
  original_type: null,
  original_size: null,
  ...NO_PROCESSED_MEDIA,
  faces_version: 0,
  ...uncheckedFaces(MEDIA_TYPES.note),
} as const satisfies Partial<EvidenceRecord>;

export type EvidenceChanges = Partial<Omit<EvidenceRecord, 'id' | 'user_id' | 'date_posted'>>;

/** The files of an item as it was given and processed (the participant's export has these). */
export type StoredVariant = 'display' | 'thumb' | 'poster' | 'original';
/** Every file the media route serves: the stored ones and the public copies with faces blurred. */
export type MediaVariant = StoredVariant | 'blurred-display' | 'blurred-thumb' | 'blurred-poster';

/** The blob key of an item's file. */
export function mediaKeyOf(record: EvidenceRecord, variant: MediaVariant): string | null {
  return {
    display: record.display_key,
    thumb: record.thumb_key,
    poster: record.poster_key,
    original: record.original_key,
    'blurred-display': record.public_display_key,
    'blurred-thumb': record.public_thumb_key,
    'blurred-poster': record.public_poster_key,
  }[variant];
}

/** The key of a revision's first display copy of a video (a remux of the original's streams). */
export function remuxedDisplayKey(id: string, revision: number): string {
  return `evidence/${id}/r${revision}/${REMUXED_DISPLAY_NAME}`;
}

/** The version of the display URL of a revision's first, remuxed copy (the 720p copy's is the revision alone). */
export function remuxedVersion(revision: number): string {
  return `${revision}-remuxed`;
}

/**
 * A media URL, versioned: the revision (a new file, new URLs), and for a video's first display
 * copy a version of its own, so that the 720p copy replacing it has a new URL. A player still on
 * the first copy's URL keeps getting the first copy's bytes (see EvidenceService.mediaFor).
 */
export function mediaUrl(record: EvidenceRecord, variant: MediaVariant): string {
  if (variant.startsWith('blurred-')) {
    // The blurred copies are made again when an administrator changes the regions: a new URL for
    // each copy, named by the version of the regions it was made for (in its key: blurred-v<n>-...).
    // Not the item's current version: the copy served until the new one is made keeps its URL.
    const made = /blurred-v(\d+)-/.exec(mediaKeyOf(record, variant) ?? '')?.[1] ?? '0';
    return `/media/evidence/${record.id}/${variant}?v=${record.media_revision}-b${made}`;
  }
  const remuxed = variant === 'display' && record.display_key === remuxedDisplayKey(record.id, record.media_revision);
  return `/media/evidence/${record.id}/${variant}?v=${remuxed ? remuxedVersion(record.media_revision) : record.media_revision}`;
}

/**
 * The item of the API. URLs lead through the gateway to this service's media route. The public's
 * copy (`publicLocationDecimals` given) carries a device position rounded to that many decimals,
 * and no avatar: an owner can change their avatar at any time after an administrator published
 * the item, and the archive must not show a picture no moderator saw (docs/SECURITY.md).
 */
export function toEvidenceResponse(record: EvidenceRecord, publicLocationDecimals?: number): Evidence {
  const ready = record.media_status === 'ready';
  // A video still processing may have its poster and thumbnail already (made before its display copy).
  const stills = ready || record.media_status === 'processing';
  const forPublic = publicLocationDecimals !== undefined;
  // The public's copy names the blurred copies when the faces are hidden (the unblurred ones are
  // then the owner's and administrators' only); the placeholder is the blurred thumbnail's.
  const copy = publicCopyOf(record);
  const blurred = forPublic && copy === 'blurred';
  // Never named to the public while its faces are looked for (the lists leave such items out; this
  // is the second lock).
  const media =
    forPublic && copy === 'pending'
      ? { aws_url: null, thumbnail_url: null, poster_url: null, placeholder: null }
      : blurred
        ? {
            aws_url: ready && record.public_display_key ? mediaUrl(record, 'blurred-display') : null,
            thumbnail_url: ready && record.public_thumb_key ? mediaUrl(record, 'blurred-thumb') : null,
            poster_url: ready && record.public_poster_key ? mediaUrl(record, 'blurred-poster') : null,
            placeholder: ready ? record.public_placeholder : null,
          }
        : {
            aws_url: ready && record.display_key ? mediaUrl(record, 'display') : null,
            thumbnail_url: stills && record.thumb_key ? mediaUrl(record, 'thumb') : null,
            poster_url: stills && record.poster_key ? mediaUrl(record, 'poster') : null,
            placeholder: stills ? record.placeholder : null,
          };
  return {
    id: record.id,
    title: record.title,
    notes: record.notes,
    location: forPublic ? coarsenLocation(record.location, publicLocationDecimals) : record.location,
    media_type: record.media_type,
    ...media,
    width: record.width,
    height: record.height,
    duration: record.duration,
    media_status: record.media_status,
    media_error: record.media_error,
    is_public: record.is_public,
    faces:
      forPublic || (record.media_type !== MEDIA_TYPES.image && record.media_type !== MEDIA_TYPES.video)
        ? null
        : { check: record.face_check, count: record.face_count, consent: record.faces_consent, public_copy: copy },
    review_status: record.review_status,
    date_posted: record.date_posted,
    user_id: record.user_id,
    username: record.username,
    avatar_AWS_URL: forPublic ? null : record.avatar_url,
  };
}
