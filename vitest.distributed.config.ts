import { defineConfig } from 'vitest/config';
import { reporters } from './tests/support/vitest-reporters.js';

// npm run test:distributed: the five services as separate processes on real Kafka, MongoDB,
// Redis, S3 and SMTP (addresses from the environment: infra/local/servers.sh), with the system
// and fault tests and the browser end-to-end suite pointed at that gateway.
//
// Each file starts its own five processes in a namespace of its own (topics and groups, Redis
// keys, databases, S3 prefix), so two files run side by side: most of a file's time is spent
// waiting on consumer groups, brokers and the browser, not on the CPU. The files that restart
// a server every file shares (the system test restarts Kafka) run after them, alone.
const SHARED_SERVERS = ['tests/distributed/system.test.ts'];
const ALL = ['tests/distributed/**/*.test.ts', 'tests/e2e/**/*.test.ts'];
// The outage suites have a configuration of their own (vitest.outages.config.ts), run beside the rest.
const OUTAGES = ['tests/distributed/outage-*.test.ts'];

export default defineConfig({
  resolve: { conditions: ['source'] },
  ssr: { resolve: { conditions: ['source'] } },
  test: {
    ...reporters('distributed'),
    env: { PORTAL_TEST_MODE: 'distributed' },
    testTimeout: 240_000,
    hookTimeout: 300_000,
    // What a page shows after a change travels through Kafka and five processes: a poll waits for
    // it longer than vitest's default second (the assertion is the same, it only may take longer).
    expect: { poll: { timeout: 15_000, interval: 100 } },
    // A file's portal, once disposed, stops while the next file's starts; the run's end waits
    // for every process it told to stop (tests/support/distributed-exits.ts).
    globalSetup: ['tests/support/distributed-exits.ts'],
    pool: 'forks',
    // Each file's sources are loaded once per worker, not once per file (as in vitest.config.ts).
    isolate: false,
    projects: [
      {
        extends: true,
        test: { name: 'side by side', include: ALL, exclude: [...SHARED_SERVERS, ...OUTAGES], maxWorkers: 2, sequence: { groupOrder: 0 } },
      },
      {
        extends: true,
        test: { name: 'alone', include: SHARED_SERVERS, maxWorkers: 1, sequence: { groupOrder: 1 } },
      },
    ],
  },
});
