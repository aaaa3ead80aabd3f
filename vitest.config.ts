import { defineConfig } from 'vitest/config';
import { reporters } from './tests/support/vitest-reporters.js';
import { UNIT_TESTS } from './vitest.unit.config.js';

// npm test runs these projects in two lanes side by side (scripts/test-lanes.mjs): one vitest
// process for the browser files, one for everything else, each one file at a time. So two files
// run at once on two cores, and never two browsers at once. `npx vitest run` alone runs every
// project in one process, one file at a time.
//
// Every project runs its files in one process per worker (isolate: false), as npm run test:unit
// always did: the sources are loaded once instead of once per file, which took some 180 s of
// the run's CPU. Each file starts its own portals, browsers and servers in its own temporary
// folders, closes them in its own hooks, and puts back any global or environment variable it
// changes.
//
// The browser lane: every file that drives Chromium, and three files that even out the two lanes'
// lengths: two that mostly wait on the clock (scheduled reminders and digests) and the hostile
// uploads (a browser lane mostly waits: about a third of a core on a quiet machine).
export const BROWSER_LANE = [
  'tests/e2e/**/*.test.ts',
  'tests/integration/appointments.test.ts',
  'tests/integration/moderator-digest.test.ts',
  'tests/integration/hostile-uploads.test.ts',
];
// Against real servers: npm run test:infra and npm run test:distributed; the images' smoke runs
// from infra/images/build.sh (vitest.images.config.ts).
const ELSEWHERE = ['tests/infra/**', 'tests/distributed/**', 'tests/images/**', '**/node_modules/**'];

// Workspace packages export their TypeScript sources under the "source" condition, so tests run
// against the sources without a build.
export default defineConfig({
  resolve: { conditions: ['source'] },
  ssr: { resolve: { conditions: ['source'] } },
  test: {
    ...reporters(process.env.TEST_REPORT_NAME ?? 'test'),
    testTimeout: 30_000,
    hookTimeout: 60_000,
    pool: 'forks',
    isolate: false,
    projects: [
      { extends: true, test: { name: 'browsers', include: BROWSER_LANE, exclude: ELSEWHERE } },
      {
        extends: true,
        // The unit tests (npm run test:unit).
        test: { name: 'unit', include: UNIT_TESTS, exclude: ELSEWHERE },
      },
      {
        extends: true,
        // The tests of a built portal that drive no browser.
        test: { name: 'portal', include: ['tests/**/*.test.ts'], exclude: [...BROWSER_LANE, ...ELSEWHERE] },
      },
    ],
  },
});
