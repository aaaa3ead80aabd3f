import { defaultClientConditions, defineConfig } from 'vite';

// The workspace packages (@portal/contracts) export their TypeScript sources under the "source"
// condition: the app bundles the shared schemas and messages from source, never a stale build.
export default defineConfig({
  resolve: { conditions: ['source', ...defaultClientConditions] },
  oxc: { jsx: { runtime: 'automatic' } },
  build: {
    outDir: 'dist',
    emptyOutDir: true,
    target: 'es2022',
    sourcemap: false,
    rolldownOptions: {
      treeshake: {
        // The shared contracts only declare things (their zod schemas are built at module level,
        // which the bundler would otherwise keep as side effects). Declared side-effect free, a
        // contracts module that a chunk does not use is left out of it: the app shell takes
        // MESSAGES and CLIENT_ROUTES without pulling in zod and the schemas.
        moduleSideEffects: [{ test: /packages\/contracts\/src\//, sideEffects: false }],
      },
      checks: { moduleLevelDirective: false },
    },
  },
  server: {
    // `npm run dev -w web` beside a running portal (npm start, port 8080).
    proxy: { '/api': 'http://127.0.0.1:8080' },
  },
});
