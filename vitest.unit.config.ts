import { defineConfig } from 'vitest/config';
import { reporters } from './tests/support/vitest-reporters.js';

// npm run test:unit: the tests that need no build and no portal process. The packages' and
// services' unit, domain and port-contract tests on the embedded adapters (SQLite files in a
// temporary folder, the embedded bus, job queue and file blob store), and the web app's unit
// tests (IndexedDB from fake-indexeddb). tests/ (integration, e2e: a built portal) is the full
// suite's, npm test, which runs these too.
export const UNIT_TESTS = ['packages/*/test/**/*.test.ts', 'services/*/test/**/*.test.ts', 'web/test/**/*.test.ts'];

export default defineConfig({
  resolve: { conditions: ['source'] },
  ssr: { resolve: { conditions: ['source'] } },
  test: {
    ...reporters('unit'),
    include: UNIT_TESTS,
    exclude: ['**/node_modules/**'],
    testTimeout: 30_000,
    hookTimeout: 60_000,
    pool: 'forks',
    // One process per worker for many files instead of one per file: the sources are loaded once
    // per worker, which halves the CPU time of the run. Each file opens its own temporary folder
    // and puts back any global it changes. npm test keeps vitest's isolation per file.
    isolate: false,
  },
});
