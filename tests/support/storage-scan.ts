import { existsSync, readdirSync } from 'node:fs';
import { join, relative, sep } from 'node:path';
import { waitFor } from '@portal/platform/testing';

/**
 * The folders of DATA_DIR where files of uploads live: the blob store (data, metadata and its
 * temporary files), unfinished resumable uploads, and the services' temporary folders (multipart
 * files of evidence and identity, the media worker's work folders).
 */
export const UPLOAD_FOLDERS = ['blobs', 'uploads', 'tmp'] as const;

/** Every file under the upload folders of a data folder, as paths relative to it with '/'. */
export function storageFiles(dataDir: string): Set<string> {
  const files = new Set<string>();
  for (const folder of UPLOAD_FOLDERS) {
    const root = join(dataDir, folder);
    if (!existsSync(root)) continue;
    for (const entry of readdirSync(root, { withFileTypes: true, recursive: true })) {
      if (entry.isFile()) files.add(relative(dataDir, join(entry.parentPath, entry.name)).split(sep).join('/'));
    }
  }
  return files;
}

/** The blob keys of the file blob store (blobs/data/<key>). */
export function blobKeys(dataDir: string, prefix = ''): string[] {
  return [...storageFiles(dataDir)]
    .filter((path) => path.startsWith('blobs/data/'))
    .map((path) => path.slice('blobs/data/'.length))
    .filter((key) => key.startsWith(prefix))
    .sort();
}

/**
 * Waits until no file is left in the upload folders beyond those that were there before and
 * those the test expects (for example the blobs of an item that was accepted); fails listing
 * what is left. Clean-up may finish just after the answer, hence the polling.
 */
export async function expectNothingLeft(
  dataDir: string,
  before: Set<string>,
  expected: (path: string) => boolean = () => false,
  what = 'the upload',
): Promise<void> {
  let left: string[] = [];
  try {
    await waitFor(
      () => {
        left = [...storageFiles(dataDir)].filter((path) => !before.has(path) && !expected(path));
        return left.length === 0;
      },
      { timeoutMs: 5_000, intervalMs: 50, what: `nothing left of ${what}` },
    );
  } catch {
    throw new Error(`files left of ${what}: ${left.join(', ')}`);
  }
}
