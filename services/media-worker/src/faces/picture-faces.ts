import { faceBoxesAt, type FaceBox, type FaceRegion } from '@portal/contracts';
import { pictureInput, type RawPicture } from '../processing/still-images.js';
import type { DetectedFace, FaceDetector } from './face-detector.js';
import { pixelateFaces } from './pixelate.js';

/**
 * The size (longest side) a picture is decoded at for the detector. The model looks at 512x512
 * whatever it is given; a larger decode only costs time.
 */
export const DETECTION_SIZE = 1024;

/** A picture decoded upright as RGB, at most `size` on its longest side. */
export async function uprightRgb(input: string | Buffer | RawPicture, size: number): Promise<RawPicture & { channels: 3 }> {
  const { data, info } = await pictureInput(input)
    .rotate()
    .resize({ width: size, height: size, fit: 'inside', withoutEnlargement: true })
    .toColourspace('srgb')
    .removeAlpha()
    .raw()
    .toBuffer({ resolveWithObject: true });
  return { data, width: info.width, height: info.height, channels: 3 };
}

/** The faces in a picture (a photo or a poster frame), as fractions of it upright. */
export async function facesInPicture(detector: FaceDetector, input: string | Buffer | RawPicture): Promise<DetectedFace[]> {
  const rgb = await uprightRgb(input, DETECTION_SIZE);
  return detector.detect(rgb.data, rgb.width, rgb.height);
}

/** A picture upright, at most `size` on its longest side, with every box pixelated (see pixelateFaces). */
export async function pixelatedPicture(input: string | Buffer | RawPicture, boxes: readonly FaceBox[], size: number): Promise<RawPicture> {
  const picture = await uprightRgb(input, size);
  pixelateFaces(picture, boxes);
  return picture;
}

/** The boxes of a photo's regions in force (an administrator's removals left out). */
export function photoBoxes(regions: readonly FaceRegion[]): FaceBox[] {
  return faceBoxesAt(regions, 0, null);
}
