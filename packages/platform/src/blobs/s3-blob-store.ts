import { createReadStream } from 'node:fs';
import { Readable } from 'node:stream';
import {
  DeleteObjectCommand,
  DeleteObjectsCommand,
  GetObjectCommand,
  HeadBucketCommand,
  HeadObjectCommand,
  ListObjectsV2Command,
  S3Client,
  type S3ClientConfig,
} from '@aws-sdk/client-s3';
import { Upload } from '@aws-sdk/lib-storage';
import { assertValidBlobKey, type BlobInfo, type BlobObject, type BlobStore, type ByteRange } from './blob-store.js';

export interface S3BlobStoreOptions {
  bucket: string;
  endpoint?: string;
  region: string;
  accessKeyId?: string;
  secretAccessKey?: string;
  /** Path-style URLs (http://host/bucket/key), as most self-hosted S3 servers want. */
  forcePathStyle?: boolean;
  /** Prepended to every key, so that several deployments can share a bucket. */
  prefix?: string;
}

function isMissing(error: unknown): boolean {
  const named = error as { name?: string; $metadata?: { httpStatusCode?: number } };
  return named?.name === 'NoSuchKey' || named?.name === 'NotFound' || named?.$metadata?.httpStatusCode === 404;
}

/**
 * Blobs in S3-compatible object storage. Streams go up as multipart uploads (@aws-sdk/lib-storage),
 * so a large video never sits whole in memory; an upload that fails is aborted, leaving no object.
 */
export class S3BlobStore implements BlobStore {
  readonly client: S3Client;
  private readonly prefix: string;

  constructor(private readonly options: S3BlobStoreOptions) {
    const config: S3ClientConfig = {
      region: options.region,
      forcePathStyle: options.forcePathStyle ?? true,
      ...(options.endpoint ? { endpoint: options.endpoint } : {}),
      ...(options.accessKeyId && options.secretAccessKey
        ? { credentials: { accessKeyId: options.accessKeyId, secretAccessKey: options.secretAccessKey } }
        : {}),
      // Some self-hosted servers reject the newer default checksums on every request.
      requestChecksumCalculation: 'WHEN_REQUIRED',
      responseChecksumValidation: 'WHEN_REQUIRED',
    };
    this.client = new S3Client(config);
    this.prefix = options.prefix ? `${options.prefix.replace(/\/+$/, '')}/` : '';
  }

  get bucket(): string {
    return this.options.bucket;
  }

  putFile(key: string, path: string, options: { contentType: string }): Promise<BlobInfo> {
    return this.put(key, createReadStream(path), options);
  }

  async put(key: string, body: Readable | Uint8Array, options: { contentType: string }): Promise<BlobInfo> {
    assertValidBlobKey(key);
    const upload = new Upload({
      client: this.client,
      params: { Bucket: this.options.bucket, Key: this.prefix + key, Body: body, ContentType: options.contentType },
      queueSize: 2,
      partSize: 8 * 1024 * 1024,
      leavePartsOnError: false,
    });
    await upload.done();
    const info = await this.stat(key);
    if (!info) throw new Error(`Blob ${key} is missing right after it was written`);
    return info;
  }

  async get(key: string, range?: ByteRange): Promise<BlobObject | null> {
    assertValidBlobKey(key);
    try {
      const response = await this.client.send(
        new GetObjectCommand({
          Bucket: this.options.bucket,
          Key: this.prefix + key,
          ...(range ? { Range: `bytes=${range.start}-${range.end ?? ''}` } : {}),
        }),
      );
      const total = response.ContentRange ? Number(response.ContentRange.split('/')[1]) : Number(response.ContentLength ?? 0);
      return {
        info: {
          key,
          size: total,
          contentType: response.ContentType ?? 'application/octet-stream',
          etag: (response.ETag ?? '').replace(/"/g, ''),
          lastModified: response.LastModified ?? new Date(0),
        },
        body: response.Body as Readable,
      };
    } catch (error) {
      if (isMissing(error)) return null;
      throw error;
    }
  }

  async stat(key: string): Promise<BlobInfo | null> {
    assertValidBlobKey(key);
    try {
      const head = await this.client.send(new HeadObjectCommand({ Bucket: this.options.bucket, Key: this.prefix + key }));
      return {
        key,
        size: Number(head.ContentLength ?? 0),
        contentType: head.ContentType ?? 'application/octet-stream',
        etag: (head.ETag ?? '').replace(/"/g, ''),
        lastModified: head.LastModified ?? new Date(0),
      };
    } catch (error) {
      if (isMissing(error)) return null;
      throw error;
    }
  }

  async delete(key: string): Promise<void> {
    assertValidBlobKey(key);
    await this.client.send(new DeleteObjectCommand({ Bucket: this.options.bucket, Key: this.prefix + key }));
  }

  async deletePrefix(prefix: string): Promise<number> {
    const trimmed = prefix.replace(/\/+$/, '');
    assertValidBlobKey(trimmed);
    let deleted = 0;
    let token: string | undefined;
    do {
      const page = await this.client.send(
        new ListObjectsV2Command({ Bucket: this.options.bucket, Prefix: `${this.prefix}${trimmed}/`, ContinuationToken: token }),
      );
      const keys = (page.Contents ?? []).map((object) => object.Key!).filter(Boolean);
      if (keys.length > 0) {
        await this.client.send(
          new DeleteObjectsCommand({ Bucket: this.options.bucket, Delete: { Objects: keys.map((Key) => ({ Key })), Quiet: true } }),
        );
        deleted += keys.length;
      }
      token = page.IsTruncated ? page.NextContinuationToken : undefined;
    } while (token);
    return deleted;
  }

  async ping(): Promise<void> {
    await this.client.send(new HeadBucketCommand({ Bucket: this.options.bucket }));
  }
}
