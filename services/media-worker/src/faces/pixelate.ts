import { enlargedFaceBox, type FaceBox } from '@portal/contracts';

/** A picture's samples in memory: `channels` bytes a pixel, rows top to bottom, `stride` bytes a row. */
export interface Plane {
  data: Uint8Array;
  width: number;
  height: number;
  channels: number;
  stride?: number;
}

/**
 * Blocks across the longer side of an enlarged face box. At 5 a face is a few flat patches in its
 * own colours: no eyes, no mouth, nothing a person or a detector recognises (tested: the detector
 * finds none of the faces it found before, services/media-worker/test/faces.test.ts).
 */
export const PIXEL_BLOCKS_ACROSS = 5;

/**
 * Pixelates every face box (fractions of the picture, enlarged over hair and chin by
 * enlargedFaceBox) in place: each block of the box becomes the mean of its samples. One rule for
 * photos (RGB from sharp) and video frames (each YUV plane, the chroma ones at half size), so the
 * blur of a photo and of a video look alike.
 */
export function pixelateFaces(plane: Plane, boxes: readonly FaceBox[]): void {
  for (const box of boxes) pixelateBox(plane, enlargedFaceBox(box));
}

function pixelateBox({ data, width, height, channels, stride = width * channels }: Plane, box: FaceBox): void {
  const left = Math.max(0, Math.floor(box.x * width));
  const top = Math.max(0, Math.floor(box.y * height));
  const right = Math.min(width, Math.ceil((box.x + box.w) * width));
  const bottom = Math.min(height, Math.ceil((box.y + box.h) * height));
  if (right <= left || bottom <= top) return;
  const block = Math.max(2, Math.ceil(Math.max(right - left, bottom - top) / PIXEL_BLOCKS_ACROSS));
  const sums = new Float64Array(channels);
  for (let by = top; by < bottom; by += block) {
    const blockBottom = Math.min(bottom, by + block);
    for (let bx = left; bx < right; bx += block) {
      const blockRight = Math.min(right, bx + block);
      sums.fill(0);
      for (let y = by; y < blockBottom; y++) {
        let at = y * stride + bx * channels;
        for (let x = bx; x < blockRight; x++) for (let c = 0; c < channels; c++) sums[c]! += data[at++]!;
      }
      const count = (blockBottom - by) * (blockRight - bx);
      for (let y = by; y < blockBottom; y++) {
        let at = y * stride + bx * channels;
        for (let x = bx; x < blockRight; x++) for (let c = 0; c < channels; c++) data[at++] = Math.round(sums[c]! / count);
      }
    }
  }
}
