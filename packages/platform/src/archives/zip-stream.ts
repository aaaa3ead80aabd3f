import { once } from 'node:events';
import type { Readable, Writable } from 'node:stream';
import archiver, { type Archiver } from 'archiver';

/** Adds one entry and resolves once it is in the archive. `stored`: no compression (media is compressed already). */
export type AddToZip = (source: Readable | string | Buffer, name: string, stored: boolean) => Promise<void>;

/**
 * Streams a zip archive (archiver) into `destination`, one entry at a time: the next source is
 * opened only when the previous one is in the archive, and the archive follows the destination's
 * backpressure, so no file is held whole in memory. A failure (of a source, of the archive, or
 * the destination closing early) destroys the destination, so a download is never complete when
 * the archive is not, and rejects.
 */
export async function streamZip(destination: Writable, fill: (add: AddToZip) => Promise<void>): Promise<void> {
  const archive: Archiver = archiver('zip', { zlib: { level: 6 } });
  const failed = new Promise<never>((_, reject) => {
    archive.on('error', reject);
    archive.on('warning', reject);
    destination.on('close', () => reject(new Error('The download was closed before the archive was complete')));
  });
  failed.catch(() => undefined);
  archive.pipe(destination);
  const add: AddToZip = async (source, name, stored) => {
    const added = once(archive, 'entry');
    archive.append(source, { name, store: stored, date: new Date() });
    await Promise.race([added, failed]);
  };
  try {
    await Promise.race([fill(add), failed]);
    await Promise.race([archive.finalize(), failed]);
    if (!destination.writableFinished) await Promise.race([once(destination, 'finish'), failed]);
  } catch (error) {
    archive.abort();
    destination.destroy(error as Error);
    throw error;
  }
}
