import { chmodSync, mkdirSync } from 'node:fs';

/**
 * Everything this process (and every program it starts, ffmpeg included) creates from now on is
 * its user's alone: files 0600, folders 0700. Under DATA_DIR that is the e-mail outbox (reset
 * codes, confirmation links), the SQLite databases, the blobs (verification photos, originals)
 * and the upload folders. Called first by every entry point: each service's main (through
 * startServiceProcess), the all-in-one main and the ops command.
 */
export function createFilesPrivately(): void {
  process.umask(0o077);
}

/**
 * DATA_DIR itself: created 0700, or narrowed to 0700 when an earlier version (or an operator)
 * left it open, so that files written before the umask are out of other accounts' reach too.
 */
export function keepDataDirPrivate(dataDir: string): void {
  mkdirSync(dataDir, { recursive: true, mode: 0o700 });
  chmodSync(dataDir, 0o700);
}
