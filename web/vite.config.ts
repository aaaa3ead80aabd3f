import { defaultClientConditions, defineConfig } from 'vite';
import { compression } from 'vite-plugin-compression2';

// The workspace packages (@portal/contracts) export their TypeScript sources under the "source"
// condition: the app bundles the shared schemas and messages from source, never a stale build.
export default defineConfig({
  resolve: { conditions: ['source', ...defaultClientConditions] },
  oxc: { jsx: { runtime: 'automatic' } },
  // Every text file of the build also as .gz and .br beside it, compressed once at the highest
  // levels; the gateway serves them (@fastify/static preCompressed) to browsers that accept them,
  // so phones download a third of the bytes and the gateway spends no CPU compressing per request.
  plugins: [
    compression({
      include: /\.(html|js|css|svg|json|webmanifest|vtt)$/,
      threshold: 512,
      skipIfLargerOrEqual: true,
      algorithms: ['gzip', 'brotliCompress'], // the plugin's defaults: gzip -9, brotli quality 11
    }),
  ],
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
        moduleSideEffects: [
          { test: /packages\/contracts\/src\//, sideEffects: false },
          // @emotion/react imports hoist-non-react-statics for its side effects only (there are
          // none; withTheme, which uses it, is not used here): 1 KB gzipped of every first load.
          { test: /node_modules\/hoist-non-react-statics\//, sideEffects: false },
        ],
      },
      checks: { moduleLevelDirective: false },
    },
  },
  server: {
    // `npm run dev -w web` beside a running portal (npm start, port 8080).
    proxy: { '/api': 'http://127.0.0.1:8080' },
  },
});
