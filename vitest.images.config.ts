import { defineConfig } from 'vitest/config';
import { reporters } from './tests/support/vitest-reporters.js';

// The smoke of the five container images (infra/images/build.sh smoke): each service started
// from its image with buildah against the servers in the environment (infra/local/servers.sh).
export default defineConfig({
  resolve: { conditions: ['source'] },
  ssr: { resolve: { conditions: ['source'] } },
  test: {
    ...reporters('images'),
    include: ['tests/images/**/*.test.ts'],
    testTimeout: 240_000,
    hookTimeout: 300_000,
    pool: 'forks',
    fileParallelism: false,
  },
});
