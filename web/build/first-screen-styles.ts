import { createServer, type Plugin } from 'vite';
import { CLIENT_ROUTES, routeHtmlFile } from '../../packages/contracts/src/client-routes.js';

type Viewer = 'loading' | 'visitor' | 'participant';
type Evidence = 'loading' | 'none' | 'some';
type Render = (route: string, viewer: Viewer, evidence: Evidence) => Promise<Map<string, string>>;

/**
 * Every first screen a route's HTML carries the styles of: before the user is known, then for a
 * visitor and a participant, each with the lists of evidence not answered yet, empty, and with
 * an item of each media type.
 */
const SCREENS: [Viewer, Evidence][] = [
  ['loading', 'loading'],
  ...(['visitor', 'participant'] as const).flatMap((viewer) =>
    (['loading', 'none', 'some'] as const).map((evidence): [Viewer, Evidence] => [viewer, evidence]),
  ),
];
const RENDER_MODULE = '/src/first-screen/first-screen-styles.tsx';
/** An address that is no route: the app's 404 page. */
const NOT_A_ROUTE = '/first-screen-not-a-route';

/** `<style data-emotion="css name1 name2 …">` with their CSS: what emotion's browser cache takes as already inserted. */
export function emotionStyleTag(key: string, styles: Map<string, string>): string {
  const css = [...styles.values()].join('').replace(/<\/style/gi, '<\\/style');
  return `<style data-emotion="${key} ${[...styles.keys()].join(' ')}">${css}</style>`;
}

/** The styles every one of `maps` has (the navigation bar, the page's frame, the loading view). */
function common(maps: Map<string, string>[]): Map<string, string> {
  const [first, ...rest] = maps;
  return new Map([...(first ?? [])].filter(([name]) => rest.every((map) => map.has(name))));
}

function union(maps: Map<string, string>[]): Map<string, string> {
  const all = new Map<string, string>();
  for (const map of maps) for (const [name, css] of map) if (!all.has(name)) all.set(name, css);
  return all;
}

/**
 * Puts the styles of each route's first screens into its HTML (web/src/first-screen): each route's
 * copy of index.html (build/route-preloads.ts) its own, index.html those every route has. The app's code renders them in Node through Vite's SSR
 * loader, in production mode so that emotion names each style as the browser build does.
 *
 * Comes after routePreloads (its copies must be in the bundle) and before compression.
 */
export function firstScreenStyles(): Plugin {
  let root = process.cwd();
  let configFile: string | undefined;
  return {
    name: 'first-screen-styles',
    apply: 'build',
    enforce: 'post',
    configResolved(config) {
      root = config.root;
      configFile = config.configFile;
    },
    async generateBundle(_options, bundle) {
      const server = await createServer({
        root,
        configFile: configFile ?? false,
        mode: 'production',
        logLevel: 'warn',
        appType: 'custom',
        server: { middlewareMode: true, hmr: false, ws: false, watch: null },
        optimizeDeps: { noDiscovery: true, include: [] },
      });
      let byRoute: Map<string, Map<string, string>>;
      let key: string;
      try {
        const module = (await server.ssrLoadModule(RENDER_MODULE)) as { firstScreenStyles: Render; EMOTION_KEY: string };
        key = module.EMOTION_KEY;
        byRoute = new Map();
        for (const route of [...CLIENT_ROUTES, NOT_A_ROUTE]) {
          const screens: Map<string, string>[] = [];
          for (const [viewer, evidence] of SCREENS) screens.push(await module.firstScreenStyles(route, viewer, evidence));
          byRoute.set(route, union(screens));
        }
      } finally {
        await server.close();
      }
      const inject = (fileName: string, styles: Map<string, string>) => {
        const html = bundle[fileName];
        if (!html || html.type !== 'asset' || typeof html.source !== 'string') {
          this.error(`first-screen-styles: the build has no ${fileName} (is routePreloads before this plugin?)`);
        }
        if (!html.source.includes('</head>')) this.error(`first-screen-styles: ${fileName} has no </head>`);
        html.source = html.source.replace('</head>', `  ${emotionStyleTag(key, styles)}\n  </head>`);
      };
      const notFound = byRoute.get(NOT_A_ROUTE)!;
      byRoute.delete(NOT_A_ROUTE);
      for (const [route, styles] of byRoute) inject(routeHtmlFile(route), styles);
      // index.html answers every page from the service worker's cache: all routes' styles would
      // be 120 KB of CSS to parse on each visit, so it carries those every page has, and those of
      // the 404 page (the gateway sends index.html for an address that is not a route).
      inject('index.html', union([common([...byRoute.values()]), notFound]));
      const home = byRoute.get('/home')?.size ?? 0;
      if (home === 0) this.error('first-screen-styles: /home rendered without a single style; see web/src/first-screen');
    },
  };
}
