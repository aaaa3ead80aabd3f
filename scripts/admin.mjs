// npm run admin -- <create|promote|dead-letters> ...: see services/identity/src/cli/admin-command.ts.
import { execSync } from 'node:child_process';
import { existsSync } from 'node:fs';

const root = new URL('..', import.meta.url).pathname;
if (!existsSync(`${root}services/identity/dist/cli/admin.js`)) execSync('npx tsc -b', { cwd: root, stdio: 'inherit' });
const { createFilesPrivately } = await import('../packages/platform/dist/index.js');
const { runAdminCommand } = await import('../services/identity/dist/cli/admin-command.js');
// What the command writes under DATA_DIR (a database made on a first run) is this user's alone.
createFilesPrivately();
process.exitCode = await runAdminCommand(process.argv.slice(2));
