import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import type { Plugin } from 'vite';

import { routeHtmlFile } from '../../packages/contracts/src/client-routes.js';
import { firstPageUrl } from '../src/api/list-urls.js';

/** The folder of the routes' copies of index.html (routeHtmlFile, shared with the gateway). */
export const ROUTE_HTML_DIR = routeHtmlFile('/').split('/')[0]!;

/**
 * Reads which page module each route shows from the app's route table (src/app/pages.ts):
 * its `load` entries (`name: () => import('../pages/...')`) and `PAGE_OF_ROUTE`
 * (`'/route': load.name`). Read as text so that the table stays the one place that says it.
 */
export function readPagesOfRoutes(pagesSource: string, pagesFile: string): Map<string, string> {
  const modules = new Map<string, string>();
  for (const [, name, path] of pagesSource.matchAll(/^\s*(\w+): \(\) => import\('([^']+)'\),$/gm)) {
    modules.set(name!, resolve(pagesFile, '..', path!));
  }
  const table = /const PAGE_OF_ROUTE\b[^\n]* = \{\n([^}]*)\}/.exec(pagesSource)?.[1];
  const routes = new Map<string, string>();
  for (const [, route, name] of (table ?? '').matchAll(/'([^']+)': load\.(\w+),/g)) {
    const module = modules.get(name!);
    if (module) routes.set(route!, module);
  }
  return routes;
}

/**
 * The API answers a route's first screen waits for whoever asks, beside /api/session and
 * /api/config (index.html): the archive's first page. Asked for with the page (the app's fetch
 * takes the preloaded answer), not after the page's code has run and rendered.
 */
const DATA_OF_ROUTE: Record<string, string[]> = {
  '/archive': [firstPageUrl({ kind: 'public' }, null)],
};

/**
 * Each route's own copy of index.html that also asks for its page's code
 * (`<link rel="modulepreload">`), so that a phone downloads the page beside the app's shell
 * instead of after it: the shell only asks for the page once it has downloaded and run, which
 * on a slow network is a whole round trip and the page's bytes later (the first paint of the
 * page's own content, Lighthouse's LCP). The gateway sends a route's copy when there is one
 * (services/gateway, web app), index.html otherwise; the service worker keeps index.html only.
 *
 * The build stops when the route table cannot be read, so the copies cannot silently go stale.
 */
export function routePreloads(): Plugin {
  let root = process.cwd();
  let base = '/';
  return {
    name: 'route-preloads',
    apply: 'build',
    enforce: 'post',
    configResolved(config) {
      root = config.root;
      base = config.base;
    },
    generateBundle(_options, bundle) {
      const pagesFile = resolve(root, 'src/app/pages.ts');
      const routes = readPagesOfRoutes(readFileSync(pagesFile, 'utf8'), pagesFile);
      if (routes.size === 0) this.error(`route-preloads: no route read from ${pagesFile}; update web/build/route-preloads.ts`);
      const html = bundle['index.html'];
      if (!html || html.type !== 'asset' || typeof html.source !== 'string') {
        this.error('route-preloads: the build has no index.html');
      }
      const chunks = Object.values(bundle).filter((output) => output.type === 'chunk');
      const byFile = new Map(chunks.map((chunk) => [chunk.fileName, chunk]));
      const closure = (start: string[]): Set<string> => {
        const seen = new Set<string>();
        const visit = (file: string) => {
          if (seen.has(file)) return;
          seen.add(file);
          for (const next of byFile.get(file)?.imports ?? []) visit(next);
        };
        start.forEach(visit);
        return seen;
      };
      const entry = chunks.find((chunk) => chunk.isEntry);
      if (!entry) this.error('route-preloads: the build has no entry chunk');
      const loadedByShell = closure([entry.fileName]);
      const normalised = (id: string | null) => (id ?? '').replace(/\.[cm]?[jt]sx?$/, '');
      for (const [route, module] of routes) {
        const page = chunks.find((chunk) => chunk.isDynamicEntry && normalised(chunk.facadeModuleId) === module);
        if (!page) this.error(`route-preloads: no chunk of ${module} (route ${route})`);
        const files = [...closure([page.fileName])].filter((file) => !loadedByShell.has(file));
        const links = [
          ...files.map((file) => `<link rel="modulepreload" crossorigin href="${base}${file}">`),
          ...(DATA_OF_ROUTE[route] ?? []).map((url) => `<link rel="preload" href="${url}" as="fetch" crossorigin="anonymous">`),
        ].join('\n    ');
        this.emitFile({
          type: 'asset',
          fileName: routeHtmlFile(route),
          source: html.source.replace(/\s*<\/head>/, `\n    ${links}\n  </head>`),
        });
      }
    },
  };
}
