import { randomUUID } from 'node:crypto';
import { createWriteStream, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import type { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { GetObjectCommand, S3Client } from '@aws-sdk/client-s3';
import { FileStore } from '@tus/file-store';
import { S3Store } from '@tus/s3-store';
import type { DataStore, Upload } from '@tus/server';
import type { S3BlobStoreOptions } from '@portal/platform';

/** Where unfinished resumable uploads wait, and how a finished one is read back. */
export interface UploadStorage {
  datastore: DataStore;
  /** A local file with the finished upload's bytes (the service removes it when done). */
  localCopy(upload: Upload): Promise<string>;
}

/** Unfinished uploads as files under a folder (all-in-one, or a single evidence replica). */
export function fileUploadStorage(directory: string, expireAfterMs: number): UploadStorage {
  return {
    datastore: new FileStore({ directory, expirationPeriodInMilliseconds: expireAfterMs }),
    async localCopy(upload) {
      const path = upload.storage?.path;
      if (!path) throw new Error(`upload ${upload.id} has no file`);
      return path;
    },
  };
}

/**
 * Unfinished uploads in S3 (@tus/s3-store), so that any evidence replica can continue an upload
 * another one started. A finished upload is streamed to a local file for inspection.
 */
export function s3UploadStorage(s3: S3BlobStoreOptions, tmpDir: string, expireAfterMs: number): UploadStorage {
  const clientConfig = {
    region: s3.region,
    forcePathStyle: s3.forcePathStyle ?? true,
    ...(s3.endpoint ? { endpoint: s3.endpoint } : {}),
    ...(s3.accessKeyId && s3.secretAccessKey ? { credentials: { accessKeyId: s3.accessKeyId, secretAccessKey: s3.secretAccessKey } } : {}),
    requestChecksumCalculation: 'WHEN_REQUIRED' as const,
    responseChecksumValidation: 'WHEN_REQUIRED' as const,
  };
  const client = new S3Client(clientConfig);
  mkdirSync(tmpDir, { recursive: true });
  return {
    // Tags are not used: several self-hosted S3 servers do not support object tagging.
    datastore: new S3Store({ partSize: 8 * 1024 * 1024, useTags: false, expirationPeriodInMilliseconds: expireAfterMs, s3ClientConfig: { ...clientConfig, bucket: s3.bucket } }),
    async localCopy(upload) {
      const path = join(tmpDir, `${randomUUID()}.upload`);
      const object = await client.send(new GetObjectCommand({ Bucket: s3.bucket, Key: upload.id }));
      await pipeline(object.Body as Readable, createWriteStream(path));
      return path;
    },
  };
}
