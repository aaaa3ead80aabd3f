import { randomUUID } from 'node:crypto';
import { createWriteStream, mkdirSync } from 'node:fs';
import { open, readFile, readdir, rm, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { DeleteObjectsCommand, GetObjectCommand, ListObjectsV2Command, S3Client } from '@aws-sdk/client-s3';
import { FileStore } from '@tus/file-store';
import { S3Store, type MetadataValue as S3UploadInfo } from '@tus/s3-store';
import { ERRORS, MemoryKvStore, type DataStore, type Upload } from '@tus/server';
import type { S3BlobStoreOptions } from '@portal/platform';
import { ScratchFull, type ScratchBudget } from './scratch-budget.js';

/** A finished upload's bytes as a local file, and the release of the scratch space it holds. */
export interface LocalCopy {
  path: string;
  /** Called once the file is gone (the service removes it when done with it). */
  release(): void;
}

/** Where unfinished resumable uploads wait, and how a finished one is read back. */
export interface UploadStorage {
  datastore: DataStore;
  /**
   * A local file with the finished upload's bytes (the service removes it when done). Throws
   * ScratchFull, keeping the upload, when a copy is needed and the scratch space has no room now.
   */
  localCopy(upload: Upload): Promise<LocalCopy>;
  /** Removes everything kept of an upload (its bytes, whatever is left of them, and its info). */
  discard(upload: Upload): Promise<void>;
  /** Removes what a crash may leave behind: parts of uploads without their partner, once expired. */
  sweepOrphans(): Promise<number>;
  /**
   * The bytes an owner's unfinished uploads have declared (an upload of a length not yet known
   * counts as `unknownAs`): what they may still fill. Upload ids start with their owner's id
   * (uploadIdFor), so that only the owner's own are read.
   */
  reservedBy(ownerId: string, unknownAs: number): Promise<number>;
  /** The same, upload by upload: each stored unfinished upload's id and declared bytes. */
  reservations(ownerId: string, unknownAs: number): Promise<Map<string, number>>;
  /**
   * After a chunk was written: starts flushing what is written of the upload to the disk in the
   * background (nothing waits for it), so that the finished file's fsync before it is
   * acknowledged has only the last chunk left to write instead of the whole file. Absent where
   * the store keeps nothing in a local page cache (S3).
   */
  flushInBackground?(upload: Upload): void;
}

/** A new upload's id: its owner's id first, so that their uploads are found by prefix in any store. */
export function uploadIdFor(ownerId: string): string {
  return `${ownerId}.${randomUUID().replaceAll('-', '')}`;
}

/** The declared length of an upload's stored info (tus's Upload as JSON), or `unknownAs`. */
function declaredSize(json: string, unknownAs: number): number {
  try {
    const size = (JSON.parse(json) as { size?: unknown }).size;
    return typeof size === 'number' && Number.isSafeInteger(size) && size >= 0 ? size : unknownAs;
  } catch {
    return 0;
  }
}

function sumOf(sizes: Map<string, number>): number {
  let total = 0;
  for (const size of sizes.values()) total += size;
  return total;
}

/** Unfinished uploads as files under a folder (all-in-one, or a single evidence replica). */
export function fileUploadStorage(directory: string, expireAfterMs: number): UploadStorage {
  const datastore = new FileStore({ directory, expirationPeriodInMilliseconds: expireAfterMs });
  /** Uploads being flushed now: one flush at a time per upload (the next chunk's covers what came meanwhile). */
  const flushing = new Set<string>();
  return {
    datastore,
    flushInBackground(upload) {
      if (flushing.has(upload.id)) return;
      flushing.add(upload.id);
      void open(join(directory, upload.id), 'r')
        .then((handle) => handle.datasync().finally(() => handle.close()))
        // A flush that fails (the upload was removed meanwhile) loses nothing: the fsync at the end is what counts.
        .catch(() => {})
        .finally(() => flushing.delete(upload.id));
    },
    // The upload's own file: no copy, no scratch space.
    async localCopy(upload) {
      const path = upload.storage?.path;
      if (!path) throw new Error(`upload ${upload.id} has no file`);
      return { path, release: () => undefined };
    },
    // FileStore.remove gives up (keeping the .json) when the bytes are gone already, which they
    // are once the service has taken the finished file over: each part is removed on its own.
    async discard(upload) {
      await rm(join(directory, upload.id), { force: true });
      await rm(join(directory, `${upload.id}.json`), { force: true });
    },
    async reservedBy(ownerId, unknownAs) {
      return sumOf(await this.reservations(ownerId, unknownAs));
    },
    async reservations(ownerId, unknownAs) {
      const prefix = `${ownerId}.`;
      const names = (await readdir(directory).catch(() => [] as string[])).filter(
        (name) => name.startsWith(prefix) && name.endsWith('.json'),
      );
      const found = new Map<string, number>();
      for (const name of names) {
        const json = await readFile(join(directory, name), 'utf8').catch(() => null);
        if (json !== null) found.set(name.slice(0, -'.json'.length), declaredSize(json, unknownAs));
      }
      return found;
    },
    // An upload is two files, <id> and <id>.json; tus lists (and so expires) only complete pairs.
    // A process killed between writing one and the other leaves half a pair, removed here.
    async sweepOrphans() {
      const names = new Set(await readdir(directory).catch(() => [] as string[]));
      let removed = 0;
      for (const name of names) {
        const partner = name.endsWith('.json') ? name.slice(0, -'.json'.length) : `${name}.json`;
        if (names.has(partner)) continue;
        const path = join(directory, name);
        const stats = await stat(path).catch(() => null);
        if (!stats?.isFile() || Date.now() - stats.mtimeMs < expireAfterMs) continue;
        await rm(path, { force: true });
        removed += 1;
      }
      return removed;
    },
  };
}

/**
 * Unfinished uploads in S3 (@tus/s3-store), so that any evidence replica can continue an upload
 * another one started. A finished upload is streamed to a local file for inspection, within the
 * scratch budget: as many at once as fit in it.
 */
export function s3UploadStorage(s3: S3BlobStoreOptions, tmpDir: string, expireAfterMs: number, scratch: ScratchBudget): UploadStorage {
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
  // Tags are not used: several self-hosted S3 servers do not support object tagging.
  // Upload infos are cached in memory (as S3Store does by default), here under our hand so that a
  // discarded upload is forgotten there too.
  const infos = new MemoryKvStore<S3UploadInfo>();
  const datastore = new S3Store({
    partSize: 8 * 1024 * 1024,
    useTags: false,
    expirationPeriodInMilliseconds: expireAfterMs,
    cache: infos,
    s3ClientConfig: { ...clientConfig, bucket: s3.bucket },
  });
  return {
    datastore,
    // S3Store.remove aborts the multipart upload first and gives up when there is none, which is
    // so once the upload was completed: it would keep the finished object and its info for ever.
    // Here a missing multipart upload is no reason to stop, and the objects go in any case.
    async discard(upload) {
      await datastore.remove(upload.id).catch((error: unknown) => {
        if (error !== ERRORS.FILE_NOT_FOUND) throw error;
      });
      const keys = [upload.id, `${upload.id}.info`, `${upload.id}.part`];
      await client.send(new DeleteObjectsCommand({ Bucket: s3.bucket, Delete: { Objects: keys.map((Key) => ({ Key })), Quiet: true } }));
      await infos.delete(upload.id);
    },
    // Each upload has its info in <id>.info (S3Store's own format: tus's Upload as JSON).
    async reservedBy(ownerId, unknownAs) {
      return sumOf(await this.reservations(ownerId, unknownAs));
    },
    async reservations(ownerId, unknownAs) {
      const found = new Map<string, number>();
      let token: string | undefined;
      do {
        const listed = await client.send(
          new ListObjectsV2Command({ Bucket: s3.bucket, Prefix: `${ownerId}.`, ...(token ? { ContinuationToken: token } : {}) }),
        );
        for (const object of listed.Contents ?? []) {
          if (!object.Key?.endsWith('.info')) continue;
          const info = await client.send(new GetObjectCommand({ Bucket: s3.bucket, Key: object.Key })).catch(() => null);
          const json = await info?.Body?.transformToString();
          if (json !== undefined) found.set(object.Key.slice(0, -'.info'.length), declaredSize(json, unknownAs));
        }
        token = listed.IsTruncated ? listed.NextContinuationToken : undefined;
      } while (token);
      return found;
    },
    // S3Store keeps an upload's parts under its multipart upload; its own expiry removes them.
    async sweepOrphans() {
      return 0;
    },
    async localCopy(upload) {
      const release = scratch.tryReserve(upload.size ?? upload.offset);
      if (!release) throw new ScratchFull();
      const path = join(tmpDir, `${randomUUID()}.upload`);
      try {
        const read = () => client.send(new GetObjectCommand({ Bucket: s3.bucket, Key: upload.id }));
        const object = await read().catch(async (error: unknown) => {
          if ((error as { name?: unknown }).name !== 'NoSuchKey' || upload.size === undefined || upload.offset !== upload.size) throw error;
          // Every byte is in its parts, but the process that stored the last one died before it
          // completed the multipart upload. A write of nothing at the end completes it (folding in
          // a last part kept aside as incomplete, if there is one), as the last PATCH would have.
          await datastore.write(Readable.from([]), upload.id, upload.offset);
          return read();
        });
        await pipeline(object.Body as Readable, createWriteStream(path));
        return { path, release };
      } catch (error) {
        await rm(path, { force: true });
        release();
        throw error;
      }
    },
  };
}
