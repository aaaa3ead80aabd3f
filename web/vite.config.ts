import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { defaultClientConditions, defineConfig, type Plugin } from 'vite';
import { compression } from 'vite-plugin-compression2';
import { VitePWA } from 'vite-plugin-pwa';
import { firstScreenStyles } from './build/first-screen-styles.js';
import { ROUTE_HTML_DIR, routePreloads } from './build/route-preloads.js';

// react-router 7 points every condition of its package exports at its development build (with
// its dev-only warnings; remix-run/react-router#12532, #14102); it ships a production build beside
// it, which the app's build takes instead. Same API, 0.4 KB gzipped less and no dev warnings.
const REACT_ROUTER_PRODUCTION = join(dirname(createRequire(import.meta.url).resolve('react-router')), '../production/index.mjs');

/**
 * Material UI's createTheme carries the CSS-variables theme builder (createThemeWithVars, 4 KB
 * gzipped) into every page, although it runs only for `createTheme({ cssVariables })`, which this
 * app does not use (app/theme.ts; MUI's own default theme takes the other branch too). The build
 * gives createTheme a stand-in that says so if it is ever reached.
 */
function withoutCssVariablesTheme(): Plugin {
  const id = '\0mui-without-css-variables-theme';
  let replaced = false;
  return {
    name: 'mui-without-css-variables-theme',
    enforce: 'pre',
    apply: 'build',
    resolveId(source, importer) {
      if (source !== './createThemeWithVars.js' || !importer || !/@mui[\\/]material[\\/]esm[\\/]styles[\\/]createTheme\.js$/.test(importer))
        return null;
      replaced = true;
      return id;
    },
    load(loaded) {
      if (loaded !== id) return null;
      return `export default function createThemeWithVars() {
  throw new Error('createTheme: CSS-variables themes (the cssVariables option) are left out of this build; see web/vite.config.ts');
}`;
    },
    buildEnd() {
      if (!replaced)
        this.warn(
          '@mui/material/esm/styles/createTheme.js no longer imports ./createThemeWithVars.js: the plugin has nothing to leave out; update or remove it',
        );
    },
  };
}

// The workspace packages (@portal/contracts) export their TypeScript sources under the "source"
// condition: the app bundles the shared schemas and messages from source, never a stale build.
export default defineConfig(({ command }) => ({
  resolve: {
    conditions: ['source', ...defaultClientConditions],
    alias: command === 'build' ? [{ find: /^react-router$/, replacement: REACT_ROUTER_PRODUCTION }] : [],
  },
  oxc: { jsx: { runtime: 'automatic' } },
  // Every text file of the build also as .gz and .br beside it, compressed once at the highest
  // levels; the gateway serves them (@fastify/static preCompressed) to browsers that accept them,
  // so phones download a third of the bytes and the gateway spends no CPU compressing per request.
  plugins: [
    withoutCssVariablesTheme(),
    // Each route's index.html also preloads its page's code (build/route-preloads.ts).
    routePreloads(),
    // Each route's HTML also carries the styles of its first screens (build/first-screen-styles.ts).
    firstScreenStyles(),
    // The service worker (src/sw/sw.ts, Workbox) with the list of files it keeps for offline use:
    // the app shell, every page's code, the icons and the onboarding video (MP4, the default
    // ONBOARDING_VIDEO_URL) with its captions. The app registers it itself (app/service-worker.ts,
    // no workbox-window on the first load); the gateway serves the manifest (PRODUCT_NAME).
    VitePWA({
      strategies: 'injectManifest',
      srcDir: 'src/sw',
      filename: 'sw.ts',
      injectRegister: false,
      manifest: false,
      injectManifest: {
        globPatterns: ['**/*.{html,js,css,svg,png,vtt,mp4}'],
        // (Each route's copy of index.html is for the first load from the network only.)
        globIgnores: ['**/*.gz', '**/*.br', 'sw.js', `${ROUTE_HTML_DIR}/**`],
        maximumFileSizeToCacheInBytes: 2 * 1024 * 1024,
        rollupFormat: 'es',
      },
      devOptions: { enabled: false },
    }),
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
}));
