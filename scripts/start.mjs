// npm start: builds what is missing or stale (incrementally), then runs the whole portal in this
// one process on its embedded defaults (SQLite, files, in-process bus) under DATA_DIR (./data).
import { execSync } from 'node:child_process';
import { existsSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';

const root = new URL('..', import.meta.url).pathname;
const run = (command) => execSync(command, { cwd: root, stdio: 'inherit' });

function newestMtime(folder) {
  let newest = 0;
  for (const entry of readdirSync(folder, { withFileTypes: true, recursive: true })) {
    if (entry.isFile()) newest = Math.max(newest, statSync(join(entry.parentPath, entry.name)).mtimeMs);
  }
  return newest;
}

// TypeScript project references rebuild only what changed; a no-op when everything is current.
run('npx tsc -b');
const webIndex = join(root, 'web/dist/index.html');
const webStale =
  !existsSync(webIndex) ||
  Math.max(newestMtime(join(root, 'web/src')), newestMtime(join(root, 'packages/contracts/src'))) > statSync(webIndex).mtimeMs;
if (webStale) run('npm run build -w web');

await import('../packages/all-in-one/dist/main.js');
