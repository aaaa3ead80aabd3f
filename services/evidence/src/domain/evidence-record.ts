import { REMUXED_DISPLAY_NAME, type Evidence, type MediaStatus, type MediaType, type ReviewStatus } from '@portal/contracts';
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
} as const satisfies Partial<EvidenceRecord>;

export type EvidenceChanges = Partial<Omit<EvidenceRecord, 'id' | 'user_id' | 'date_posted'>>;

export type MediaVariant = 'display' | 'thumb' | 'poster' | 'original';

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
export function mediaUrl(record: Pick<EvidenceRecord, 'id' | 'media_revision' | 'display_key'>, variant: MediaVariant): string {
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
  return {
    id: record.id,
    title: record.title,
    notes: record.notes,
    location: publicLocationDecimals === undefined ? record.location : coarsenLocation(record.location, publicLocationDecimals),
    media_type: record.media_type,
    aws_url: ready && record.display_key ? mediaUrl(record, 'display') : null,
    thumbnail_url: stills && record.thumb_key ? mediaUrl(record, 'thumb') : null,
    poster_url: stills && record.poster_key ? mediaUrl(record, 'poster') : null,
    placeholder: stills ? record.placeholder : null,
    width: record.width,
    height: record.height,
    duration: record.duration,
    media_status: record.media_status,
    media_error: record.media_error,
    is_public: record.is_public,
    review_status: record.review_status,
    date_posted: record.date_posted,
    user_id: record.user_id,
    username: record.username,
    avatar_AWS_URL: publicLocationDecimals === undefined ? record.avatar_url : null,
  };
}
