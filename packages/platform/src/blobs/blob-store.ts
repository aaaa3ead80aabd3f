import type { Readable } from 'node:stream';

export interface BlobInfo {
  key: string;
  size: number;
  contentType: string;
  /** Changes whenever the content changes; usable as an HTTP ETag (without quotes). */
  etag: string;
  lastModified: Date;
}

export interface ByteRange {
  /** First byte, inclusive. */
  start: number;
  /** Last byte, inclusive; to the end when absent. */
  end?: number;
}

export interface BlobObject {
  info: BlobInfo;
  body: Readable;
}

/**
 * The blob store port: private object storage for photos, media originals and derivatives.
 * Contract (shared by the file and the S3 adapters):
 * - put streams its body and only makes the object visible once it is complete: a reader never
 *   sees half an object, and a failed put leaves no object behind;
 * - get returns null for a missing key, and honours an inclusive byte range;
 * - delete is idempotent; deletePrefix removes every key under a prefix;
 * - keys are relative paths of [A-Za-z0-9._-] segments joined by '/'.
 */
export interface BlobStore {
  put(key: string, body: Readable | Uint8Array, options: { contentType: string }): Promise<BlobInfo>;
  /**
   * Stores the bytes of a local file (a finished upload) under key, with put's guarantees. The
   * file stays where it is, for the caller to remove, and must not be written to afterwards: the
   * file adapter links it into place instead of copying it (no second write of a 1 GB video).
   */
  putFile(key: string, path: string, options: { contentType: string }): Promise<BlobInfo>;
  get(key: string, range?: ByteRange): Promise<BlobObject | null>;
  stat(key: string): Promise<BlobInfo | null>;
  delete(key: string): Promise<void>;
  deletePrefix(prefix: string): Promise<number>;
  ping(): Promise<void>;
}

const SEGMENT = /^[A-Za-z0-9_-][A-Za-z0-9._-]*$/;

export function assertValidBlobKey(key: string): void {
  const segments = key.split('/');
  if (key.length === 0 || key.length > 512 || !segments.every((segment) => SEGMENT.test(segment) && segment !== '..')) {
    throw new Error(`Invalid blob key: ${JSON.stringify(key)}`);
  }
}
