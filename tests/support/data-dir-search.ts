import { createHash } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative, sep } from 'node:path';

export interface Finding {
  /** The file, relative to the data folder, with '/'. */
  file: string;
  /** What was found in it: a needle's label, or 'sha256 of <label>' when the whole file is one of theirs. */
  what: string;
}

/**
 * Searches every file under a data folder, byte for byte (SQLite files with their -wal and -shm
 * files, blobs, temporary and upload folders, the outbox), for each needle, and compares every
 * file's SHA-256 with the given hashes. File and folder names are searched too.
 */
export function searchDataDir(dataDir: string, needles: Record<string, string>, hashes: Record<string, string>): Finding[] {
  const findings: Finding[] = [];
  const patterns = Object.entries(needles).map(([label, text]) => [label, Buffer.from(text, 'utf8'), text.toLowerCase()] as const);
  const byHash = new Map(Object.entries(hashes).map(([label, hash]) => [hash, label]));
  for (const entry of readdirSync(dataDir, { withFileTypes: true, recursive: true })) {
    const path = join(entry.parentPath, entry.name);
    const name = relative(dataDir, path).split(sep).join('/');
    for (const [label, , lower] of patterns) {
      if (name.toLowerCase().includes(lower)) findings.push({ file: name, what: `${label} in the name` });
    }
    if (!entry.isFile()) continue;
    let bytes: Buffer;
    try {
      bytes = readFileSync(path);
    } catch {
      continue; // removed while we looked (a temporary file)
    }
    for (const [label, needle] of patterns) {
      if (bytes.includes(needle)) findings.push({ file: name, what: label });
    }
    const hash = createHash('sha256').update(bytes).digest('hex');
    const label = byHash.get(hash);
    if (label) findings.push({ file: name, what: `sha256 of ${label}` });
  }
  return findings;
}
