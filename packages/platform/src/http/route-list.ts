/** One route an HTTP app answers: a method (upper case, or ALL) and its path pattern. */
export interface ServedRoute {
  method: string;
  path: string;
}

interface RouterLayer {
  rawPath?: unknown;
  slash?: boolean;
  route?: { path: unknown; methods: Record<string, boolean> };
  handle?: { stack?: RouterLayer[] };
}

function paths(raw: unknown): string[] {
  if (typeof raw === 'string') return [raw];
  if (Array.isArray(raw)) return raw.flatMap(paths);
  throw new Error(`A route path that is not a string (${String(raw)}) cannot be listed`);
}

function join(prefix: string, path: string): string {
  return prefix === '' || prefix === '/' ? path : `${prefix}${path === '/' ? '' : path}`;
}

function walk(stack: RouterLayer[], prefix: string, out: ServedRoute[]): void {
  for (const layer of stack) {
    if (layer.route) {
      for (const path of paths(layer.route.path)) {
        for (const [method, on] of Object.entries(layer.route.methods)) {
          if (on) out.push({ method: method === '_all' ? 'ALL' : method.toUpperCase(), path: join(prefix, path) });
        }
      }
    } else if (layer.handle?.stack) {
      // A mounted router: its routes sit under the mount path.
      const mounts = layer.slash ? ['/'] : paths(layer.rawPath);
      for (const mount of mounts) walk(layer.handle.stack, join(prefix, mount), out);
    }
  }
}

/**
 * Every route an express app (or router) declares, read from its router stack: what the running
 * code serves, for checks that compare it with a table (the authorization matrix, the OpenAPI
 * document). Middleware without a route (body parsers, the identity check) is not listed.
 */
export function expressRoutes(app: { router?: unknown; stack?: unknown }): ServedRoute[] {
  const router = (app.router ?? app) as { stack?: RouterLayer[] };
  if (!Array.isArray(router.stack)) throw new Error('Not an express app or router');
  const out: ServedRoute[] = [];
  walk(router.stack, '', out);
  return out;
}
