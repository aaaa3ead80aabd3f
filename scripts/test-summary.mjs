#!/usr/bin/env node
// Adds up the test reports one CI run wrote: vitest's JSON reports (*.vitest.json, written where
// TEST_REPORT_DIR points) and JUnit files (*.junit.xml, e.g. the API fuzzer's). Prints one line a
// report, then a closing total: "tests: N passed, N failed, N skipped". Exits 1 when a report
// counts a failure or when no test ran at all.
// Usage: node scripts/test-summary.mjs DIR [DIR ...]
import { readdirSync, readFileSync, existsSync } from 'node:fs';
import { join } from 'node:path';

const dirs = process.argv.slice(2);
if (dirs.length === 0) {
  console.error('usage: node scripts/test-summary.mjs DIR [DIR ...]');
  process.exit(2);
}

const total = { passed: 0, failed: 0, skipped: 0 };
const rows = [];

function add(name, counts) {
  rows.push({ name, ...counts });
  total.passed += counts.passed;
  total.failed += counts.failed;
  total.skipped += counts.skipped;
}

function fromVitest(file) {
  const report = JSON.parse(readFileSync(file, 'utf8'));
  return {
    passed: report.numPassedTests ?? 0,
    failed: (report.numFailedTests ?? 0) + (report.numRuntimeErrorTestSuites ?? 0),
    skipped: (report.numPendingTests ?? 0) + (report.numTodoTests ?? 0),
  };
}

function fromJUnit(file) {
  const xml = readFileSync(file, 'utf8');
  const counts = { passed: 0, failed: 0, skipped: 0 };
  for (const match of xml.matchAll(/<testsuite\s([^>]*)>/g)) {
    const attr = (name) => Number(new RegExp(`\\b${name}="(\\d+)"`).exec(match[1])?.[1] ?? 0);
    const failed = attr('failures') + attr('errors');
    const skipped = attr('skipped');
    counts.failed += failed;
    counts.skipped += skipped;
    counts.passed += Math.max(0, attr('tests') - failed - skipped);
  }
  return counts;
}

for (const dir of dirs) {
  if (!existsSync(dir)) continue;
  for (const name of readdirSync(dir).sort()) {
    const file = join(dir, name);
    if (name.endsWith('.vitest.json')) add(name.replace(/\.vitest\.json$/, ''), fromVitest(file));
    else if (name.endsWith('.junit.xml')) add(name.replace(/\.junit\.xml$/, ''), fromJUnit(file));
  }
}

for (const row of rows) {
  console.log(`  ${row.name.padEnd(24)} ${row.passed} passed, ${row.failed} failed, ${row.skipped} skipped`);
}
console.log(`tests: ${total.passed} passed, ${total.failed} failed, ${total.skipped} skipped`);
process.exit(total.failed > 0 || total.passed === 0 ? 1 : 0);
