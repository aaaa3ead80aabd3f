import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { randomBytes, randomUUID } from 'node:crypto';
import { afterAll, describe, expect, it } from 'vitest';
import { CreateBucketCommand, ListObjectsV2Command, S3Client } from '@aws-sdk/client-s3';
import { Upload } from '@tus/server';
import type { S3Store } from '@tus/s3-store';
import { s3UploadStorage, uploadIdFor } from '../../services/evidence/src/repositories/upload-storage.js';
import { ScratchBudget } from '../../services/evidence/src/repositories/scratch-budget.js';
import { infraServers, stopContainers } from '../support/infra-servers.js';

// Resumable uploads kept in S3 (@tus/s3-store), as the distributed evidence service keeps them,
// against the real S3-compatible server the CI script starts.
const servers = await infraServers();
afterAll(() => stopContainers());

/** The parts of S3Store this test drives directly, to leave an upload as a crash would. */
interface S3StoreInternals {
  getMetadata(id: string): Promise<unknown>;
  uploadPart(metadata: unknown, body: Buffer, partNumber: number): Promise<string>;
}

if (servers.s3) {
  const s3 = { ...servers.s3, forcePathStyle: true };
  const scratch = mkdtempSync(join(tmpdir(), 's3-uploads-'));
  afterAll(() => rmSync(scratch, { recursive: true, force: true }));

  const client = new S3Client({
    region: s3.region,
    endpoint: s3.endpoint,
    forcePathStyle: true,
    credentials: { accessKeyId: s3.accessKeyId, secretAccessKey: s3.secretAccessKey },
  });
  afterAll(() => client.destroy());

  async function storage() {
    await client.send(new CreateBucketCommand({ Bucket: s3.bucket })).catch(() => undefined);
    return s3UploadStorage(s3, scratch, 3600_000, new ScratchBudget(64 * 1024 * 1024));
  }

  /** The keys of the bucket that belong to one upload. */
  async function objectsOf(id: string): Promise<string[]> {
    const listed = await client.send(new ListObjectsV2Command({ Bucket: s3.bucket, Prefix: id }));
    return (listed.Contents ?? []).map((object) => object.Key!).sort();
  }

  describe('resumable uploads in S3', () => {
    it('reads back a finished upload', async () => {
      const uploads = await storage();
      const bytes = randomBytes(300_000);
      const upload = await uploads.datastore.create(
        new Upload({ id: randomUUID().replaceAll('-', ''), size: bytes.length, offset: 0, metadata: { title: 'x' } }),
      );
      expect(await uploads.datastore.write(Readable.from([bytes]), upload.id, 0)).toBe(bytes.length);
      const finished = await uploads.datastore.getUpload(upload.id);
      expect(finished.offset).toBe(bytes.length);
      const { path } = await uploads.localCopy(finished);
      expect(readFileSync(path).equals(bytes)).toBe(true);
      expect(await objectsOf(upload.id)).toEqual([upload.id, `${upload.id}.info`]);
      // Nothing of a filed upload stays in the bucket: its bytes are the item's now.
      await uploads.discard(finished);
      expect(await objectsOf(upload.id)).toEqual([]);
      await expect(uploads.datastore.getUpload(upload.id)).rejects.toBeTruthy();
    });

    it('finishes an upload whose last part was stored by a process that died before completing it', async () => {
      const uploads = await storage();
      const store = uploads.datastore as S3Store & S3StoreInternals;
      const bytes = randomBytes(200_000);
      const upload = await store.create(
        new Upload({ id: randomUUID().replaceAll('-', ''), size: bytes.length, offset: 0, metadata: { title: 'x' } }),
      );
      // What a kill -9 between the last part and CompleteMultipartUpload leaves: every byte in a part.
      await store.uploadPart(await store.getMetadata(upload.id), bytes, 1);
      const found = await store.getUpload(upload.id);
      expect(found.offset).toBe(bytes.length);
      const { path } = await uploads.localCopy(found);
      expect(readFileSync(path).equals(bytes)).toBe(true);
      await uploads.discard(found);
      expect(await objectsOf(upload.id)).toEqual([]);
    });

    it('removes an unfinished upload with its parts', async () => {
      const uploads = await storage();
      const upload = await uploads.datastore.create(
        new Upload({ id: randomUUID().replaceAll('-', ''), size: 12 * 1024 * 1024, offset: 0, metadata: { title: 'x' } }),
      );
      // Less than a part: S3Store keeps it aside as the upload's incomplete part.
      expect(await uploads.datastore.write(Readable.from([randomBytes(1_000_000)]), upload.id, 0)).toBe(1_000_000);
      expect(await objectsOf(upload.id)).toContain(`${upload.id}.part`);
      await uploads.discard(await uploads.datastore.getUpload(upload.id));
      expect(await objectsOf(upload.id)).toEqual([]);
    });

    it("counts the bytes one owner's unfinished uploads declare, and only theirs (the per-participant quota)", async () => {
      const uploads = await storage();
      const owner = randomUUID();
      const other = randomUUID();
      const create = (ownerId: string, size: number | undefined) =>
        uploads.datastore.create(
          new Upload({
            id: uploadIdFor(ownerId),
            ...(size === undefined ? {} : { size }),
            offset: 0,
            metadata: { title: 'x', owner: ownerId },
          }),
        );
      expect(await uploads.reservedBy(owner, 1000)).toBe(0);
      const first = await create(owner, 300_000);
      await create(owner, 200_000);
      await create(other, 5_000_000);
      // A deferred length counts as the largest upload allowed.
      await create(owner, undefined);
      expect(await uploads.reservedBy(owner, 1000)).toBe(501_000);
      await uploads.discard(await uploads.datastore.getUpload(first.id));
      expect(await uploads.reservedBy(owner, 1000)).toBe(201_000);
      expect(await uploads.reservedBy(other, 1000)).toBe(5_000_000);
    });
  });
} else {
  describe.skip('resumable uploads in S3 — no server (S3_ENDPOINT/S3_BUCKET unset and no Docker)', () => it('skipped', () => undefined));
}
