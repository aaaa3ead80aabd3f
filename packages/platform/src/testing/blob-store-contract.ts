import { createHash, randomBytes, randomUUID } from 'node:crypto';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { buffer } from 'node:stream/consumers';
import { describe, expect, it } from 'vitest';
import type { BlobStore } from '../blobs/blob-store.js';

export interface BlobStoreContractOptions {
  create: () => Promise<BlobStore>;
}

/** The one contract every blob store adapter must pass. Keys get a random prefix per run. */
export function blobStoreContract(name: string, options: BlobStoreContractOptions): void {
  describe(`BlobStore contract: ${name}`, () => {
    const prefix = `contract-${randomUUID().slice(0, 8)}`;
    const key = (name: string) => `${prefix}/${name}`;

    it('stores bytes with their content type and reads them back', async () => {
      const store = await options.create();
      const bytes = Buffer.from('hello evidence');
      const info = await store.put(key('a.txt'), bytes, { contentType: 'text/plain' });
      expect(info).toMatchObject({ key: key('a.txt'), size: bytes.length, contentType: 'text/plain' });
      expect(info.etag).toMatch(/\S/);
      const object = await store.get(key('a.txt'));
      expect(object).not.toBeNull();
      expect(await buffer(object!.body)).toEqual(bytes);
      expect(object!.info.contentType).toBe('text/plain');
      expect((await store.stat(key('a.txt')))?.size).toBe(bytes.length);
    });

    it('streams a large body in many chunks without changing a byte', async () => {
      const store = await options.create();
      const chunks = Array.from({ length: 40 }, () => randomBytes(256 * 1024));
      const whole = Buffer.concat(chunks);
      const info = await store.put(key('large.bin'), Readable.from(chunks), { contentType: 'application/octet-stream' });
      expect(info.size).toBe(whole.length);
      const object = await store.get(key('large.bin'));
      const read = await buffer(object!.body);
      expect(createHash('sha256').update(read).digest('hex')).toBe(createHash('sha256').update(whole).digest('hex'));
    });

    it('reads an inclusive byte range, and to the end when the range is open', async () => {
      const store = await options.create();
      await store.put(key('range.txt'), Buffer.from('0123456789'), { contentType: 'text/plain' });
      const middle = await store.get(key('range.txt'), { start: 2, end: 5 });
      expect((await buffer(middle!.body)).toString()).toBe('2345');
      expect(middle!.info.size).toBe(10);
      const tail = await store.get(key('range.txt'), { start: 7 });
      expect((await buffer(tail!.body)).toString()).toBe('789');
    });

    it('answers null for a key that does not exist', async () => {
      const store = await options.create();
      expect(await store.get(key('missing'))).toBeNull();
      expect(await store.stat(key('missing'))).toBeNull();
    });

    it('stores a local file with putFile, leaves the file to the caller, and changes the etag on a second putFile', async () => {
      const store = await options.create();
      const dir = await mkdtemp(join(tmpdir(), 'blob-contract-'));
      try {
        const first = join(dir, 'first.bin');
        const second = join(dir, 'second.bin');
        const bytes = randomBytes(3 * 1024 * 1024 + 17);
        await writeFile(first, bytes);
        await writeFile(second, Buffer.from('a second version'));
        const info = await store.putFile(key('file.bin'), first, { contentType: 'video/mp4' });
        expect(info).toMatchObject({ key: key('file.bin'), size: bytes.length, contentType: 'video/mp4' });
        expect((await readFile(first)).equals(bytes)).toBe(true);
        // The caller removes its file; the object stays whole.
        await rm(first);
        const object = await store.get(key('file.bin'));
        expect(
          createHash('sha256')
            .update(await buffer(object!.body))
            .digest('hex'),
        ).toBe(createHash('sha256').update(bytes).digest('hex'));
        const replaced = await store.putFile(key('file.bin'), second, { contentType: 'text/plain' });
        expect(replaced.etag).not.toBe(info.etag);
        expect((await buffer((await store.get(key('file.bin')))!.body)).toString()).toBe('a second version');
      } finally {
        await rm(dir, { recursive: true, force: true });
      }
    });

    it('replaces an object on a second put and changes its etag', async () => {
      const store = await options.create();
      const first = await store.put(key('replace'), Buffer.from('one'), { contentType: 'text/plain' });
      const second = await store.put(key('replace'), Buffer.from('second'), { contentType: 'text/markdown' });
      expect(second.etag).not.toBe(first.etag);
      const object = await store.get(key('replace'));
      expect((await buffer(object!.body)).toString()).toBe('second');
      expect(object!.info.contentType).toBe('text/markdown');
    });

    it('leaves no object behind when the body fails half way', async () => {
      const store = await options.create();
      const failing = new Readable({
        read() {
          this.push(randomBytes(64 * 1024));
          this.destroy(new Error('connection dropped'));
        },
      });
      await expect(store.put(key('broken'), failing, { contentType: 'video/mp4' })).rejects.toThrow();
      expect(await store.stat(key('broken'))).toBeNull();
    });

    it('deletes idempotently, and deletes everything under a prefix', async () => {
      const store = await options.create();
      await store.put(key('gone'), Buffer.from('x'), { contentType: 'text/plain' });
      await store.delete(key('gone'));
      await store.delete(key('gone'));
      expect(await store.stat(key('gone'))).toBeNull();

      await store.put(key('folder/one'), Buffer.from('1'), { contentType: 'text/plain' });
      await store.put(key('folder/sub/two'), Buffer.from('2'), { contentType: 'text/plain' });
      await store.put(key('folder-sibling'), Buffer.from('3'), { contentType: 'text/plain' });
      expect(await store.deletePrefix(key('folder/'))).toBe(2);
      expect(await store.stat(key('folder/one'))).toBeNull();
      expect(await store.stat(key('folder/sub/two'))).toBeNull();
      expect(await store.stat(key('folder-sibling'))).not.toBeNull();
    });

    it('refuses keys that could escape the store', async () => {
      const store = await options.create();
      for (const bad of ['../etc/passwd', '/absolute', 'a//b', 'a/../b', '', 'spaces are bad']) {
        await expect(store.put(bad, Buffer.from('x'), { contentType: 'text/plain' })).rejects.toThrow(/Invalid blob key/);
      }
    });

    it('answers ping', async () => {
      const store = await options.create();
      await expect(store.ping()).resolves.toBeUndefined();
    });
  });
}
