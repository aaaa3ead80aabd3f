import { defineConfig } from 'vitest/config';
import { reporters } from './tests/support/vitest-reporters.js';

// npm run test:outages: the outage suites (tests/distributed/outage-*.test.ts). Each file starts its
// own set of real servers (infra/local/servers.sh on free ports, tests/support/private-servers.ts)
// and the five services as processes on them, then stops one server after another for minutes
// (MongoDB and Redis in one file, Kafka, S3 and SMTP in the other). They mostly wait, so the two
// files run side by side, and CI runs them in the background beside the other suites (.ci/run),
// not in npm run test:distributed (vitest.distributed.config.ts leaves them out). They need the
// services built (tsc -b), not the web app.
export default defineConfig({
  resolve: { conditions: ['source'] },
  ssr: { resolve: { conditions: ['source'] } },
  test: {
    ...reporters('outages'),
    include: ['tests/distributed/outage-*.test.ts'],
    env: { PORTAL_TEST_MODE: 'distributed' },
    testTimeout: 20 * 60_000,
    hookTimeout: 300_000,
    globalSetup: ['tests/support/distributed-exits.ts'],
    pool: 'forks',
    isolate: false,
    maxWorkers: 2,
  },
});
