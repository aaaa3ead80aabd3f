import { thumbHashToDataURL } from 'thumbhash';
import type { Evidence, MediaType } from '@portal/contracts';

/** The filter of SPEC section 2: All, then the media types 1 to 4. */
export const EVIDENCE_FILTERS: readonly { value: MediaType | null; label: string }[] = [
  { value: null, label: 'All' },
  { value: 1, label: 'Notes' },
  { value: 2, label: 'Photos' },
  { value: 3, label: 'Videos' },
  { value: 4, label: 'Audio' },
];

const KIND_NAMES: Record<MediaType, string> = { 1: 'Note', 2: 'Photo', 3: 'Video', 4: 'Audio' };

/** 'Note', 'Photo', 'Video' or 'Audio'. */
export function kindName(type: MediaType): string {
  return KIND_NAMES[type];
}

/** Own cards: the title cut at 8 characters plus ' ...' (SPEC section 9). */
export const CARD_TITLE_LENGTH = 8;
export function truncateTitle(title: string): string {
  return title.length > CARD_TITLE_LENGTH ? `${title.slice(0, CARD_TITLE_LENGTH)} ...` : title;
}

/**
 * The titles of a list of own cards: each cut at 8 characters as SPEC says, except where that
 * would make two different titles read alike ('Offline ...' four times): those are shown up to
 * the end of the word where they differ, enough to tell them apart.
 */
export function cardTitles(titles: readonly string[]): string[] {
  const byCut = new Map<string, Set<string>>();
  for (const title of titles) {
    const cut = truncateTitle(title);
    if (cut !== title) byCut.set(cut, (byCut.get(cut) ?? new Set()).add(title));
  }
  return titles.map((title) => {
    const cut = truncateTitle(title);
    const alike = byCut.get(cut);
    if (!alike || alike.size < 2) return cut;
    let differsAt = CARD_TITLE_LENGTH;
    for (const other of alike) {
      if (other === title) continue;
      let index = 0;
      while (index < title.length && title[index] === other[index]) index++;
      differsAt = Math.max(differsAt, index + 1);
    }
    const wordEnd = title.indexOf(' ', differsAt - 1);
    return wordEnd === -1 ? title : `${title.slice(0, wordEnd)} ...`;
  });
}

// Made at the first date shown, not when this module loads: building a DateTimeFormat costs a
// phone tens of milliseconds of main thread, and the archive's first screen shows no date.
let postedFormat: Intl.DateTimeFormat | undefined;

/** The date posted in medium date-time format, e.g. 'Mar 4, 2026, 5:07 PM'. */
export function formatPosted(iso: string): string {
  const date = new Date(iso);
  if (Number.isNaN(date.getTime())) return iso;
  postedFormat ??= new Intl.DateTimeFormat('en-US', { dateStyle: 'medium', timeStyle: 'short' });
  return postedFormat.format(date);
}

/** Seconds as m:ss (or h:mm:ss). */
export function formatDuration(seconds: number): string {
  const whole = Math.max(0, Math.floor(seconds));
  const h = Math.floor(whole / 3600);
  const m = Math.floor((whole % 3600) / 60);
  const s = String(whole % 60).padStart(2, '0');
  return h > 0 ? `${h}:${String(m).padStart(2, '0')}:${s}` : `${m}:${s}`;
}

const placeholders = new Map<string, string | null>();

/** The ThumbHash of an item as a data: URL (a blurred picture to show while the real one loads). */
export function placeholderUrl(hash: string | null): string | null {
  if (!hash) return null;
  let url = placeholders.get(hash);
  if (url === undefined) {
    try {
      const bytes = Uint8Array.from(atob(hash), (char) => char.charCodeAt(0));
      url = thumbHashToDataURL(bytes);
    } catch {
      url = null;
    }
    placeholders.set(hash, url);
  }
  return url;
}

/** The small picture of an item for a grid: the photo's thumbnail or the video's poster frame. */
export function previewPictureOf(item: Evidence): string | null {
  if (item.media_status === 'processing') return processingPictureOf(item);
  if (item.media_status !== 'ready') return null;
  if (item.media_type === 2) return item.thumbnail_url ?? item.aws_url;
  if (item.media_type === 3) return item.thumbnail_url ?? item.poster_url;
  return null;
}

/**
 * A video still being processed already has its poster frame (the worker takes it from the
 * original before any display copy): the grid shows it under the "Processing…" sign. Nothing for
 * other kinds, nor for a video whose frame has not come yet.
 */
export function processingPictureOf(item: Evidence): string | null {
  if (item.media_status !== 'processing' || item.media_type !== 3) return null;
  return item.thumbnail_url ?? item.poster_url ?? null;
}
