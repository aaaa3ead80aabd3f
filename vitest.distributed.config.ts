import { defineConfig } from 'vitest/config';
import { reporters } from './tests/support/vitest-reporters.js';

// npm run test:distributed: the five services as separate processes on real Kafka, MongoDB,
// Redis, S3 and SMTP (addresses from the environment: infra/local/servers.sh), with the system
// and fault tests and the browser end-to-end suite pointed at that gateway.
export default defineConfig({
  resolve: { conditions: ['source'] },
  ssr: { resolve: { conditions: ['source'] } },
  test: {
    ...reporters('distributed'),
    include: ['tests/distributed/**/*.test.ts', 'tests/e2e/**/*.test.ts'],
    env: { PORTAL_TEST_MODE: 'distributed' },
    testTimeout: 240_000,
    hookTimeout: 300_000,
    pool: 'forks',
    fileParallelism: false,
  },
});
