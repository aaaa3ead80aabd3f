import sharp from 'sharp';
import { payloadTooLarge } from '@portal/platform';

export class NotAnImageError extends Error {
  override name = 'NotAnImageError';
}

const ACCEPTED_FORMATS = new Set(['jpeg', 'png', 'webp', 'gif', 'avif', 'heif', 'tiff']);

export interface ProcessedImage {
  bytes: Buffer;
  contentType: string;
  extension: string;
}

/**
 * Turns an uploaded picture into a clean copy: the type is judged by decoding the bytes (never by
 * the name or the claimed type), the camera's orientation is applied, and every piece of metadata
 * (GPS position, camera serial, EXIF, XMP) is dropped by re-encoding.
 */
export class PhotoProcessor {
  constructor(private readonly maxInputPixels = 50_000_000) {}

  /** A verification photo: up to 1600 px on its longest side, JPEG. */
  verificationPhoto(path: string): Promise<ProcessedImage> {
    return this.process(path, (image) =>
      image.resize({ width: 1600, height: 1600, fit: 'inside', withoutEnlargement: true }).jpeg({ quality: 85, mozjpeg: true }),
    ).then((bytes) => ({ bytes, contentType: 'image/jpeg', extension: 'jpg' }));
  }

  /** An avatar: a 512 px square, WebP. */
  avatar(path: string): Promise<ProcessedImage> {
    return this.process(path, (image) =>
      image.resize({ width: 512, height: 512, fit: 'cover', position: 'attention' }).webp({ quality: 82 }),
    ).then((bytes) => ({ bytes, contentType: 'image/webp', extension: 'webp' }));
  }

  private async process(path: string, encode: (image: sharp.Sharp) => sharp.Sharp): Promise<Buffer> {
    let format: string | undefined;
    try {
      format = (await sharp(path, { limitInputPixels: this.maxInputPixels }).metadata()).format;
    } catch (error) {
      throw this.refusal(error, 'not an image');
    }
    if (!format || !ACCEPTED_FORMATS.has(format)) throw new NotAnImageError(`unsupported format ${format ?? 'unknown'}`);
    try {
      return await encode(sharp(path, { limitInputPixels: this.maxInputPixels, animated: false }).rotate()).toBuffer();
    } catch (error) {
      throw this.refusal(error, 'the image could not be decoded');
    }
  }

  /** A decompression bomb (a small file declaring a huge picture) is stopped by its header alone. */
  private refusal(error: unknown, reason: string): Error {
    if (/pixel limit/i.test((error as Error | undefined)?.message ?? '')) {
      return payloadTooLarge(`The picture has too many pixels (at most ${Math.floor(this.maxInputPixels / 1_000_000)} megapixels)`);
    }
    return new NotAnImageError(reason);
  }
}
