#!/usr/bin/env node
// Keeps a copy of today's identity and gateway builds, with the shared packages they import, so
// that a later build can be measured against it in one run (--compare-identity and
// --compare-gateway of bench:gateway):
//
//   npm run build && node bench/gateway/keep-build.mjs before
//   # ... change, npm run build ...
//   npm run bench:gateway -- --compare-identity bench/results/before/services/identity/dist/main.js \
//                            --compare-gateway bench/results/before/services/gateway/dist/main.js
//
// The copy goes to bench/results/<name>/: services/{identity,gateway}/{package.json,dist} and
// node_modules/@portal/{platform,contracts}/{package.json,dist}, so that the copied services import
// the copied platform and contracts (Node looks for @portal/* in the nearest node_modules first),
// and everything else (express, jose, fastify ...) from the repository's node_modules as usual.
import { cpSync, existsSync, mkdirSync, rmSync, symlinkSync } from 'node:fs';
import { join, relative } from 'node:path';
import { RESULTS_DIR, ROOT, UsageError, checkBuilt, runBench } from '../lib/runner.mjs';

const USAGE = 'Usage: node bench/gateway/keep-build.mjs <name>   (copies the current build to bench/results/<name>/)';

async function main() {
  const name = process.argv[2];
  if (!name || name === '-h' || name === '--help') {
    console.log(USAGE);
    return;
  }
  if (!/^[A-Za-z0-9._-]+$/.test(name))
    throw new UsageError(`the name may hold letters, digits, '.', '_' and '-' only (got ${name})\n${USAGE}`);
  checkBuilt([
    'packages/contracts/dist/index.js',
    'packages/platform/dist/index.js',
    'services/identity/dist/main.js',
    'services/gateway/dist/main.js',
  ]);
  const target = join(RESULTS_DIR, name);
  rmSync(target, { recursive: true, force: true });
  const copy = (from, to) => {
    mkdirSync(join(target, to), { recursive: true });
    cpSync(join(ROOT, from, 'package.json'), join(target, to, 'package.json'));
    cpSync(join(ROOT, from, 'dist'), join(target, to, 'dist'), { recursive: true });
    // The package's own dependencies (e.g. platform's @opentelemetry), where npm put them.
    if (existsSync(join(ROOT, from, 'node_modules')))
      symlinkSync(join(ROOT, from, 'node_modules'), join(target, to, 'node_modules'), 'dir');
  };
  copy('services/identity', 'services/identity');
  copy('services/gateway', 'services/gateway');
  copy('packages/platform', 'node_modules/@portal/platform');
  copy('packages/contracts', 'node_modules/@portal/contracts');
  const rel = relative(ROOT, target);
  console.log(`Kept the current build in ${rel}/. Compare with it:`);
  console.log(
    `  npm run bench:gateway -- --compare-identity ${rel}/services/identity/dist/main.js --compare-gateway ${rel}/services/gateway/dist/main.js`,
  );
}

await runBench('keep-build', main);
