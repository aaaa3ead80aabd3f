import { describe, expect, it } from 'vitest';
import { UPLOAD_CHUNK_MAX, UPLOAD_CHUNK_MIN, uploadChunkSize } from '../src/uploads.js';

const MiB = 1024 * 1024;

describe('uploadChunkSize', () => {
  it('sends photos and short videos in 5 MiB chunks', () => {
    expect(uploadChunkSize(0)).toBe(5 * MiB);
    expect(uploadChunkSize(3 * MiB)).toBe(5 * MiB);
    expect(uploadChunkSize(200 * MiB)).toBe(5 * MiB);
  });

  it('cuts a large file into about 40 chunks of a whole number of MiB', () => {
    expect(uploadChunkSize(400 * MiB)).toBe(10 * MiB);
    expect(uploadChunkSize(400 * MiB + 1)).toBe(11 * MiB);
  });

  it('never goes over the largest chunk, however large the file', () => {
    expect(uploadChunkSize(1e9)).toBe(24 * MiB);
    expect(uploadChunkSize(50e9)).toBe(UPLOAD_CHUNK_MAX);
    for (const size of [1, 1e6, 1e8, 7e8, 3e9]) {
      const chunk = uploadChunkSize(size);
      expect(chunk % MiB).toBe(0);
      expect(chunk).toBeGreaterThanOrEqual(UPLOAD_CHUNK_MIN);
      expect(chunk).toBeLessThanOrEqual(UPLOAD_CHUNK_MAX);
    }
  });
});
