import { existsSync } from 'node:fs';
import { join, resolve } from 'node:path';
import fp from 'fastify-plugin';
import fastifyStatic from '@fastify/static';
import { CLIENT_ROUTES, MESSAGES, routeHtmlFile } from '@portal/contracts';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { routeAt } from '../../routes/route-table.js';
import { appShortName } from '../../web/app-short-name.js';

/** The web app's service worker and the Workbox files it may load (web/vite.config.ts). */
const SERVICE_WORKER_FILE = /^[\\/](?:sw\.js|workbox-[\w-]+\.js)(?:\.(?:br|gz))?$/;
const CLIENT_ROUTE_SET = new Set<string>(CLIENT_ROUTES);

/**
 * The web app manifest (installable app): the product's name, the app's colours (web/src/app/theme.ts
 * and index.html) and its icons (web/public/icons), standalone like an app of the phone.
 */
export function webAppManifest(productName: string, shortName: string = appShortName(productName)) {
  return {
    id: '/',
    name: productName,
    short_name: shortName,
    description: 'Register, watch the briefing and send evidence, also without a connection.',
    start_url: '/home',
    scope: '/',
    display: 'standalone',
    orientation: 'portrait',
    background_color: '#f4f2ee',
    theme_color: '#1f3a5f',
    icons: [
      { src: '/icons/icon-192.png', sizes: '192x192', type: 'image/png', purpose: 'any' },
      { src: '/icons/icon-512.png', sizes: '512x512', type: 'image/png', purpose: 'any' },
      { src: '/icons/maskable-192.png', sizes: '192x192', type: 'image/png', purpose: 'maskable' },
      { src: '/icons/maskable-512.png', sizes: '512x512', type: 'image/png', purpose: 'maskable' },
    ],
  };
}

/** The Cache-Control of a built file: hashed names for a year, the onboarding video a day, the service worker never, the rest revalidated. */
function cacheControlOf(webRoot: string, path: string): string {
  // Hashed file names never change content. The bundled onboarding video changes only with a
  // release. The service worker (sw.js) and its helpers are never kept: a new release must reach an
  // installed app at its next check, whatever a cache on the way would like. Everything else is
  // revalidated, so a new deployment reaches phones at once.
  if (path.includes(join(webRoot, 'assets'))) return 'public, max-age=31536000, immutable';
  if (path.includes(join(webRoot, 'onboarding'))) return 'public, max-age=86400';
  return SERVICE_WORKER_FILE.test(path.slice(webRoot.length)) ? 'no-cache, max-age=0, must-revalidate' : 'no-cache';
}

export interface WebAppOptions {
  /** Folder of the built web app (index.html and assets/). */
  webDist: string;
  productName: string;
  /** The app's name on a home screen (PRODUCT_SHORT_NAME), else made from productName. */
  productShortName: string | null;
}

/**
 * The web app: its built files (pre-compressed .br and .gz sent to browsers that accept them),
 * each client route's own copy of index.html (which preloads the route's page), the manifest
 * named after this run's product, and the 404s of everything else (JSON under /api/, /assets/
 * and /media/, the app's own page elsewhere).
 */
export const webApp = fp<WebAppOptions>(
  async (app, { webDist, productName, productShortName }) => {
    const webRoot = resolve(webDist);
    const webBuilt = existsSync(join(webRoot, 'index.html'));
    // A client route's own copy of index.html, or index.html itself for a build without them.
    const routePages = new Map<string, string>(
      CLIENT_ROUTES.map((route) => [route, existsSync(join(webRoot, routeHtmlFile(route))) ? routeHtmlFile(route) : 'index.html']),
    );
    const pageOfRoute = (route: string) => routePages.get(route) ?? 'index.html';
    if (webBuilt) {
      await app.register(fastifyStatic, {
        root: webRoot,
        prefix: '/',
        index: false,
        preCompressed: true,
        cacheControl: false,
        setHeaders: (res, path) => {
          // @fastify/static picks the encoding from Accept-Encoding but does not say so: caches
          // between the gateway and the browser must keep one copy per encoding.
          res.setHeader('vary', 'accept-encoding');
          res.setHeader('cache-control', cacheControlOf(webRoot, path));
        },
      });
      // The root is a folder to the static plugin; it is the app's entry like every client route.
      app.get('/', { config: { gatewayRoute: routeAt('/') } }, async (_request, reply) =>
        reply.header('cache-control', 'no-cache').sendFile(pageOfRoute('/')),
      );
      // The installable app's manifest, named after this run's product (PRODUCT_NAME), not the build.
      const manifest = JSON.stringify(webAppManifest(productName, productShortName ?? undefined));
      app.get('/manifest.webmanifest', { config: { gatewayRoute: routeAt('/manifest.webmanifest') } }, async (_request, reply) =>
        reply.header('cache-control', 'no-cache').type('application/manifest+json; charset=utf-8').send(manifest),
      );
    } else {
      app.log.warn({ webRoot }, 'the web app is not built (npm run build); only the API is served');
    }

    app.setNotFoundHandler(async (request: FastifyRequest, reply: FastifyReply) => {
      const path = request.url.split('?')[0] ?? '/';
      const wantsPage =
        (request.method === 'GET' || request.method === 'HEAD') &&
        !path.startsWith('/api/') &&
        !path.startsWith('/assets/') &&
        !path.startsWith('/media/');
      if (!wantsPage) return reply.status(404).send({ code: 'not_found', message: MESSAGES.notFound });
      if (!webBuilt) return reply.status(503).type('text/plain').send('The web app is not built yet. Run: npm run build');
      void reply.header('cache-control', 'no-cache');
      return CLIENT_ROUTE_SET.has(path) ? reply.sendFile(pageOfRoute(path)) : reply.status(404).sendFile('index.html');
    });
  },
  { name: 'web-app' },
);
