import { defineConfig } from 'vitest/config';
import { reporters } from './tests/support/vitest-reporters.js';
import { UNIT_TESTS } from './vitest.unit.config.js';

// Workspace packages export their TypeScript sources under the "source" condition, so tests run
// against the sources without a build.
export default defineConfig({
  resolve: { conditions: ['source'] },
  ssr: { resolve: { conditions: ['source'] } },
  test: {
    ...reporters('test'),
    // The unit tests (npm run test:unit, vitest.unit.config.ts) and the tests of a built portal.
    include: [...UNIT_TESTS, 'tests/**/*.test.ts'],
    // Against real servers: npm run test:infra and npm run test:distributed; the images' smoke
    // runs from infra/images/build.sh (vitest.images.config.ts).
    exclude: ['tests/infra/**', 'tests/distributed/**', 'tests/images/**', '**/node_modules/**'],
    testTimeout: 30_000,
    hookTimeout: 60_000,
    pool: 'forks',
  },
});
