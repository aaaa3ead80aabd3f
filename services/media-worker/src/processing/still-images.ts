import sharp from 'sharp';
import { rgbaToThumbHash } from 'thumbhash';

export interface StillImages {
  display: Buffer;
  thumbnail: Buffer;
  /** ThumbHash, base64: a ~25-byte blurred preview to draw while the thumbnail loads. */
  placeholder: string;
  width: number;
  height: number;
}

export const MAX_PIXELS = 80_000_000;

/** A decoded picture (upright already): `channels` bytes a pixel, rows top to bottom. */
export interface RawPicture {
  data: Uint8Array;
  width: number;
  height: number;
  channels: 3 | 4;
}

/** sharp for a file, an encoded picture or a decoded one. */
export function pictureInput(input: string | Buffer | RawPicture) {
  if (typeof input === 'string' || Buffer.isBuffer(input)) return sharp(input, { limitInputPixels: MAX_PIXELS, animated: false });
  return sharp(input.data, { raw: { width: input.width, height: input.height, channels: input.channels } });
}

/**
 * From a picture (a photo, a video's poster frame, or either with its faces pixelated): an upright display copy (longest side at
 * most `displaySize`) and a thumbnail, both WebP with no metadata at all, plus a ThumbHash.
 */
export async function stillImages(input: string | Buffer | RawPicture, displaySize = 1600): Promise<StillImages> {
  const base = () => pictureInput(input).rotate();
  const display = await base()
    .resize({ width: displaySize, height: displaySize, fit: 'inside', withoutEnlargement: true })
    .webp({ quality: 80 })
    .toBuffer({ resolveWithObject: true });
  const thumbnail = await base()
    .resize({ width: 480, height: 480, fit: 'inside', withoutEnlargement: true })
    .webp({ quality: 70 })
    .toBuffer();
  // The placeholder is a blur of a few dozen pixels: it comes from the thumbnail just made (a
  // small WebP, already upright) rather than from a third decode of the whole original, which
  // for a 12-megapixel JPEG cost about a fifth of the photo's processing (bench/image).
  const small = await sharp(thumbnail)
    .resize({ width: 100, height: 100, fit: 'inside' })
    .ensureAlpha()
    .raw()
    .toBuffer({ resolveWithObject: true });
  const hash = rgbaToThumbHash(small.info.width, small.info.height, small.data);
  return {
    display: display.data,
    thumbnail,
    placeholder: Buffer.from(hash).toString('base64'),
    width: display.info.width,
    height: display.info.height,
  };
}
