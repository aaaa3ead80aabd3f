import { defineConfig } from 'vitest/config';
import { reporters } from './tests/support/vitest-reporters.js';

// npm run test:infra: the distributed adapters against real servers (addresses from the
// environment, or testcontainers where Docker exists). Not part of npm test.
export default defineConfig({
  resolve: { conditions: ['source'] },
  ssr: { resolve: { conditions: ['source'] } },
  test: {
    ...reporters('infra'),
    include: ['tests/infra/**/*.test.ts'],
    testTimeout: 90_000,
    hookTimeout: 240_000,
    pool: 'forks',
    // Each file's sources are loaded once per worker, not once per file (as in vitest.config.ts).
    isolate: false,
    fileParallelism: false,
  },
});
