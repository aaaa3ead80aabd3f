// Which picture a grid card shows for an item (web/src/evidence/format.ts): a video that is still
// processing shows the poster frame the worker took first, under the "Processing…" sign.
import { describe, expect, it } from 'vitest';
import type { Evidence } from '@portal/contracts';
import { previewPictureOf, processingPictureOf } from '../src/evidence/format';

function item(fields: Partial<Evidence>): Evidence {
  return {
    media_type: 3,
    media_status: 'processing',
    thumbnail_url: null,
    poster_url: null,
    aws_url: null,
    ...fields,
  } as Evidence;
}

describe('the picture of a grid card', () => {
  it("shows a processing video's poster frame as soon as the item has it", () => {
    expect(previewPictureOf(item({ thumbnail_url: '/media/a-thumb.webp', poster_url: '/media/a-poster.webp' }))).toBe(
      '/media/a-thumb.webp',
    );
    expect(previewPictureOf(item({ poster_url: '/media/a-poster.webp' }))).toBe('/media/a-poster.webp');
    expect(processingPictureOf(item({ thumbnail_url: '/media/a-thumb.webp' }))).toBe('/media/a-thumb.webp');
  });

  it('shows nothing for a processing video whose frame has not come yet, nor for a processing photo or sound', () => {
    expect(previewPictureOf(item({}))).toBeNull();
    expect(previewPictureOf(item({ media_type: 2, thumbnail_url: '/media/p.webp', aws_url: '/media/p.jpg' }))).toBeNull();
    expect(previewPictureOf(item({ media_type: 4, thumbnail_url: '/media/s.webp' }))).toBeNull();
  });

  it('keeps the pictures of ready items, and none for a failed one', () => {
    expect(previewPictureOf(item({ media_status: 'ready', poster_url: '/media/v.webp' }))).toBe('/media/v.webp');
    expect(previewPictureOf(item({ media_status: 'ready', media_type: 2, aws_url: '/media/p.jpg' }))).toBe('/media/p.jpg');
    expect(previewPictureOf(item({ media_status: 'failed', thumbnail_url: '/media/x.webp' }))).toBeNull();
  });
});
