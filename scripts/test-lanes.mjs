#!/usr/bin/env node
// npm test's runner: the projects of vitest.config.ts in two vitest processes side by side, each
// one file at a time: the browser lane (Chromium) and the other lane (unit tests, then the
// portal's HTTP, media and crash tests). On two cores that keeps both busy without ever running
// two browsers at once; a single vitest process cannot (projects that run together share one
// worker count). concurrently (npm) runs the two, prefixes each line with its lane, and fails
// when either fails; both always run to their end, so one run lists every failure.
// Arguments are passed to both vitest processes (e.g. a file filter).
import { fileURLToPath } from 'node:url';
import concurrently from 'concurrently';

const vitest = fileURLToPath(new URL('../node_modules/vitest/vitest.mjs', import.meta.url));
const quote = (arg) => `'${arg.replaceAll("'", "'\\''")}'`;

const extra = process.argv.slice(2).map(quote).join(' ');
// With TEST_REPORT_DIR set (CI), each lane writes its own JSON report (tests/support/vitest-reporters.ts).
const lane = (name, projects) => ({
  name,
  command: `node ${quote(vitest)} run --passWithNoTests ${projects.map((project) => `--project ${project}`).join(' ')} ${extra}`.trim(),
  env: { TEST_REPORT_NAME: `test-${name}` },
});

const { result } = concurrently([lane('browsers', ['browsers']), lane('others', ['unit', 'portal'])], {
  prefix: '[{name}]',
  prefixColors: ['cyan', 'magenta'],
});
try {
  await result;
} catch {
  console.error('npm test: a lane failed (its lines are prefixed with its name)');
  process.exit(1);
}
