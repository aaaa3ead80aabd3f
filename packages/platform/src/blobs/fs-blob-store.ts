import { createHash, randomBytes, randomUUID } from 'node:crypto';
import { createReadStream, createWriteStream } from 'node:fs';
import { link, mkdir, open, readdir, readFile, rename, rm, stat, writeFile } from 'node:fs/promises';
import { dirname, join, relative, sep } from 'node:path';
import { Readable, Transform } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { assertValidBlobKey, type BlobInfo, type BlobObject, type BlobStore, type ByteRange } from './blob-store.js';

interface Sidecar {
  contentType: string;
  etag: string;
}

/**
 * Blobs as files under a root folder: data/<key> holds the bytes and meta/<key>.json the content
 * type and checksum. Writes go to a temporary file that is flushed to disk and then renamed, so
 * an object is either absent or complete, also after a crash.
 */
export class FsBlobStore implements BlobStore {
  private readonly dataRoot: string;
  private readonly metaRoot: string;
  private readonly tmpRoot: string;
  /** Temporary files of writes cut short by the death of their process, being removed. */
  private readonly tidied: Promise<void>;

  constructor(root: string) {
    this.dataRoot = join(root, 'data');
    this.metaRoot = join(root, 'meta');
    this.tmpRoot = join(root, 'tmp');
    this.tidied = removeAbandonedWrites(this.tmpRoot).catch(() => undefined);
  }

  async put(key: string, body: Readable | Uint8Array, options: { contentType: string }): Promise<BlobInfo> {
    assertValidBlobKey(key);
    await this.tidied;
    await mkdir(this.tmpRoot, { recursive: true });
    const tmp = join(this.tmpRoot, tmpName());
    const hash = createHash('sha256');
    const source = body instanceof Readable ? body : Readable.from([Buffer.from(body)]);
    try {
      await pipeline(
        source,
        new Transform({
          transform(chunk: Buffer, _encoding, callback) {
            hash.update(chunk);
            callback(null, chunk);
          },
        }),
        createWriteStream(tmp, { flags: 'wx' }),
      );
      await fsync(tmp);
      return await this.commit(key, tmp, { contentType: options.contentType, etag: hash.digest('hex').slice(0, 32) });
    } catch (error) {
      await rm(tmp, { force: true });
      await rm(`${tmp}.json`, { force: true });
      throw error;
    }
  }

  /**
   * A hard link to the file instead of a copy: a finished 1 GB upload is not written a second
   * time, nor read again for a checksum (the etag is random per put, which is all an ETag needs:
   * it changes whenever the object does). Where the file is on another file system, or links are
   * not possible, the bytes are copied as put does.
   */
  async putFile(key: string, path: string, options: { contentType: string }): Promise<BlobInfo> {
    assertValidBlobKey(key);
    await this.tidied;
    await mkdir(this.tmpRoot, { recursive: true });
    const tmp = join(this.tmpRoot, tmpName());
    try {
      await link(path, tmp);
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      if (code === 'EXDEV' || code === 'EPERM' || code === 'ENOTSUP' || code === 'EMLINK' || code === 'ENOSYS') {
        return this.put(key, createReadStream(path), options);
      }
      throw error;
    }
    try {
      await fsync(tmp);
      return await this.commit(key, tmp, { contentType: options.contentType, etag: randomBytes(16).toString('hex') });
    } catch (error) {
      await rm(tmp, { force: true });
      await rm(`${tmp}.json`, { force: true });
      throw error;
    }
  }

  /** Makes a complete temporary file the object at key: its sidecar first, then the data. */
  private async commit(key: string, tmp: string, sidecar: Sidecar): Promise<BlobInfo> {
    const metaPath = this.metaPath(key);
    const dataPath = this.dataPath(key);
    await mkdir(dirname(metaPath), { recursive: true });
    await mkdir(dirname(dataPath), { recursive: true });
    const metaTmp = `${tmp}.json`;
    await writeFile(metaTmp, JSON.stringify(sidecar));
    await rename(metaTmp, metaPath);
    await rename(tmp, dataPath);
    const info = await this.stat(key);
    if (!info) throw new Error(`Blob ${key} vanished while it was written`);
    return info;
  }

  async get(key: string, range?: ByteRange): Promise<BlobObject | null> {
    const info = await this.stat(key);
    if (!info) return null;
    const options = range ? { start: range.start, end: range.end ?? Math.max(info.size - 1, 0) } : {};
    return { info, body: createReadStream(this.dataPath(key), options) };
  }

  async stat(key: string): Promise<BlobInfo | null> {
    assertValidBlobKey(key);
    try {
      const stats = await stat(this.dataPath(key));
      if (!stats.isFile()) return null;
      const sidecar = await this.readSidecar(key);
      return {
        key,
        size: stats.size,
        contentType: sidecar?.contentType ?? 'application/octet-stream',
        etag: sidecar?.etag ?? `${stats.size.toString(16)}-${stats.mtimeMs.toString(16)}`,
        lastModified: stats.mtime,
      };
    } catch (error) {
      if (isNotFound(error)) return null;
      throw error;
    }
  }

  async delete(key: string): Promise<void> {
    assertValidBlobKey(key);
    await rm(this.dataPath(key), { force: true });
    await rm(this.metaPath(key), { force: true });
  }

  async deletePrefix(prefix: string): Promise<number> {
    const trimmed = prefix.replace(/\/+$/, '');
    assertValidBlobKey(trimmed);
    const folder = this.dataPath(trimmed);
    const keys = await listFiles(folder);
    for (const file of keys) {
      await this.delete(relative(this.dataRoot, file).split(sep).join('/'));
    }
    await rm(folder, { recursive: true, force: true });
    await rm(this.metaPath(trimmed).replace(/\.json$/, ''), { recursive: true, force: true });
    return keys.length;
  }

  async ping(): Promise<void> {
    await mkdir(this.dataRoot, { recursive: true });
  }

  private dataPath(key: string): string {
    return join(this.dataRoot, ...key.split('/'));
  }

  private metaPath(key: string): string {
    return `${join(this.metaRoot, ...key.split('/'))}.json`;
  }

  private async readSidecar(key: string): Promise<Sidecar | null> {
    try {
      return JSON.parse(await readFile(this.metaPath(key), 'utf8')) as Sidecar;
    } catch (error) {
      if (isNotFound(error)) return null;
      throw error;
    }
  }
}

/** A temporary file's name says which process writes it: <pid>-<random>. */
const tmpName = () => `${process.pid}-${randomUUID()}`;

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/**
 * A write in progress lives in tmp/ until it is renamed into place; if its process was killed,
 * the file stays there. Removed here: files of processes no longer running, and files with this
 * process's id made before it started (a restarted container has the same id every time).
 */
async function removeAbandonedWrites(tmpRoot: string): Promise<void> {
  const started = Date.now() - process.uptime() * 1000;
  for (const name of await readdir(tmpRoot).catch(() => [] as string[])) {
    const pid = Number(/^(\d+)-/.exec(name)?.[1]);
    const path = join(tmpRoot, name);
    const stats = await stat(path).catch(() => null);
    if (!stats) continue;
    const abandoned = Number.isInteger(pid)
      ? pid === process.pid
        ? stats.mtimeMs < started
        : !isAlive(pid)
      : Date.now() - stats.mtimeMs > 24 * 3600_000;
    if (abandoned) await rm(path, { force: true });
  }
}

async function fsync(path: string): Promise<void> {
  const handle = await open(path, 'r');
  try {
    await handle.sync();
  } finally {
    await handle.close();
  }
}

async function listFiles(folder: string): Promise<string[]> {
  try {
    const entries = await readdir(folder, { withFileTypes: true, recursive: true });
    return entries.filter((entry) => entry.isFile()).map((entry) => join(entry.parentPath, entry.name));
  } catch (error) {
    if (isNotFound(error)) return [];
    throw error;
  }
}

function isNotFound(error: unknown): boolean {
  return (
    (error as NodeJS.ErrnoException | undefined)?.code === 'ENOENT' || (error as NodeJS.ErrnoException | undefined)?.code === 'ENOTDIR'
  );
}
