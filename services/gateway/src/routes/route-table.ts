/**
 * Every route the gateway serves, declared once: which service answers it (or the gateway
 * itself), the body it may carry, whether it counts as one of its participant's uploads, what the
 * public cache may do with its answer, and what its answer evicts. The fastify routes are
 * registered from this table (each route's `config` carries its entry), and the upload guard, the
 * public cache, the proxy fast path and the authorization-matrix test all read it: a route added
 * here is routed, limited and evicted in one step, and one added anywhere else is not served.
 */

/** Who answers: a service behind the gateway, or the gateway itself. */
export type Upstream = 'identity' | 'evidence' | 'gateway';

/**
 * The body a route may carry, refused with 413 above its limit (http/plugins/upload-guard.ts):
 * - `evidence-file`: one evidence file of any kind in a multipart form;
 * - `upload-stream`: a resumable upload's bytes (tus), the evidence file's limit without a form;
 * - `photo`: a verification photo or avatar in a multipart form;
 * - `csv`: the box office's appointments (APPOINTMENT_CSV_MAX_BYTES) in a multipart form;
 * - `json`: anything else, at most 64 KB.
 */
export type BodyKind = 'evidence-file' | 'upload-stream' | 'photo' | 'csv' | 'json';

/**
 * Whether a request counts against its participant's share of uploads at once
 * (UPLOAD_CONCURRENT_PER_PARTICIPANT): always, never, or `with-body` when it carries bytes (a tus
 * creation POST with its first bytes, creation-with-upload, uploads as a PATCH does).
 */
export type UploadCount = 'always' | 'never' | 'with-body';

/**
 * What a write does to the public cache when its answer leaves (a read does nothing):
 * - `clear`: empties it at once (the writer sees the change in their next request);
 * - `settle`: empties it, and nothing is stored until another service has applied the change it
 *   hears of on the bus (a rename reaches the archive through evidence's consumer a moment later);
 * - `keep`: nothing (a resumable upload's chunks: the item they make announces itself).
 */
export type CacheEviction = 'clear' | 'settle' | 'keep';

/**
 * Which cached sessions an answer evicts at once (other gateways hear the event): the caller's
 * own (logout), or those of the user named in the path after a 200 (the onboarding video
 * watched: the flag travels in the caller's token).
 */
export type SessionEviction = 'caller' | 'path-user' | 'none';

export interface GatewayRoute {
  /** Methods as fastify declares them ('ALL' for a catch-all). */
  methods: readonly string[];
  /**
   * The path as fastify declares it. A proxied prefix (`proxy: true`) covers the prefix and
   * everything under it, and is declared twice by the proxy plugin (`/p` and `/p/*`).
   */
  path: string;
  upstream: Upstream;
  /** A prefix forwarded to its service whole (@fastify/http-proxy); false for one route. */
  proxy: boolean;
  /** The public cache may keep its answer (only when the service marks it public). */
  cacheable: boolean;
  /** Whether the proxy fast path may answer its GETs and HEADs (nothing at the gateway acts on them). */
  fastPath: boolean;
}

/** A request rule: which requests carry which body, count as uploads and evict what. */
export interface RouteRule {
  method: string;
  /** An exact path, or a prefix when it ends with '/'. */
  path: string;
  body: BodyKind;
  upload: UploadCount;
  cache: CacheEviction;
  sessions: SessionEviction;
}

/** What a request's rule says, without the method and path that matched it. */
export type RequestRule = Omit<RouteRule, 'method' | 'path'>;

const EVERY_METHOD = ['DELETE', 'GET', 'HEAD', 'PATCH', 'POST', 'PUT', 'OPTIONS'] as const;
const READS = ['GET', 'HEAD'] as const;

/** The routes, in the order fastify registers them. */
export const GATEWAY_ROUTES: readonly GatewayRoute[] = [
  { methods: ['GET'], path: '/api/config', upstream: 'gateway', proxy: false, cacheable: false, fastPath: false },
  { methods: ['GET'], path: '/api/openapi.json', upstream: 'gateway', proxy: false, cacheable: false, fastPath: false },
  { methods: EVERY_METHOD, path: '/api/user', upstream: 'identity', proxy: true, cacheable: true, fastPath: true },
  { methods: READS, path: '/api/session', upstream: 'identity', proxy: true, cacheable: true, fastPath: true },
  { methods: EVERY_METHOD, path: '/api/email', upstream: 'identity', proxy: true, cacheable: true, fastPath: true },
  // The audit log is kept by identity (docs/decisions/0026-audit-log-as-outbox-events.md).
  { methods: READS, path: '/api/admin', upstream: 'identity', proxy: true, cacheable: true, fastPath: true },
  // Appointments belong to participants (by e-mail and phone): identity keeps them. Never cached.
  { methods: EVERY_METHOD, path: '/api/appointments', upstream: 'identity', proxy: true, cacheable: false, fastPath: true },
  // The profile update belongs to identity although it sits under /api/evidence.
  { methods: ['PUT'], path: '/api/evidence/user', upstream: 'identity', proxy: true, cacheable: false, fastPath: false },
  { methods: EVERY_METHOD, path: '/api/evidence', upstream: 'evidence', proxy: true, cacheable: true, fastPath: true },
  { methods: READS, path: '/media', upstream: 'evidence', proxy: true, cacheable: false, fastPath: false },
  // A user's evidence belongs to evidence although it sits under identity's /api/user.
  { methods: ['GET'], path: '/api/user/:id/evidence', upstream: 'evidence', proxy: false, cacheable: true, fastPath: false },
  { methods: ['ALL'], path: '/api/*', upstream: 'gateway', proxy: false, cacheable: false, fastPath: false },
  // Operations (plugins/health.ts) and the web app (plugins/web-app.ts; `/*` is its built files).
  { methods: ['GET'], path: '/healthz', upstream: 'gateway', proxy: false, cacheable: false, fastPath: false },
  { methods: ['GET'], path: '/readyz', upstream: 'gateway', proxy: false, cacheable: false, fastPath: false },
  { methods: ['GET'], path: '/', upstream: 'gateway', proxy: false, cacheable: false, fastPath: false },
  { methods: ['GET'], path: '/manifest.webmanifest', upstream: 'gateway', proxy: false, cacheable: false, fastPath: false },
  { methods: ['GET'], path: '/*', upstream: 'gateway', proxy: false, cacheable: false, fastPath: false },
];

/** The table's entry for a route the gateway answers itself (a route not in the table is a mistake found at start). */
export function routeAt(path: string): GatewayRoute {
  const route = GATEWAY_ROUTES.find((one) => one.path === path);
  if (!route) throw new Error(`${path} is not in the gateway's route table (routes/route-table.ts)`);
  return route;
}

/**
 * The requests that differ from the default (a JSON body of at most 64 KB, no upload; a write
 * empties the public cache, a read keeps it). The first rule that matches wins.
 */
export const ROUTE_RULES: readonly RouteRule[] = [
  { method: 'POST', path: '/api/evidence', body: 'evidence-file', upload: 'always', cache: 'clear', sessions: 'none' },
  { method: 'PUT', path: '/api/evidence/update/', body: 'evidence-file', upload: 'always', cache: 'clear', sessions: 'none' },
  // tus: the creation, which may carry the first bytes (creation-with-upload), and its chunks.
  { method: 'POST', path: '/api/evidence/uploads', body: 'upload-stream', upload: 'with-body', cache: 'clear', sessions: 'none' },
  { method: 'POST', path: '/api/evidence/uploads/', body: 'upload-stream', upload: 'with-body', cache: 'clear', sessions: 'none' },
  { method: 'PATCH', path: '/api/evidence/uploads', body: 'upload-stream', upload: 'always', cache: 'keep', sessions: 'none' },
  { method: 'PATCH', path: '/api/evidence/uploads/', body: 'upload-stream', upload: 'always', cache: 'keep', sessions: 'none' },
  { method: 'POST', path: '/api/user/register', body: 'photo', upload: 'never', cache: 'clear', sessions: 'none' },
  { method: 'POST', path: '/api/appointments/import', body: 'csv', upload: 'never', cache: 'keep', sessions: 'none' },
  // A profile change (name, avatar) reaches the archive through evidence's consumer.
  { method: 'PUT', path: '/api/evidence/user', body: 'photo', upload: 'always', cache: 'settle', sessions: 'none' },
  { method: 'PUT', path: '/api/user/watched/', body: 'json', upload: 'never', cache: 'clear', sessions: 'path-user' },
  { method: 'PUT', path: '/api/user/', body: 'json', upload: 'never', cache: 'settle', sessions: 'none' },
  { method: 'DELETE', path: '/api/user/', body: 'json', upload: 'never', cache: 'settle', sessions: 'none' },
  { method: 'DELETE', path: '/api/evidence/user', body: 'json', upload: 'never', cache: 'settle', sessions: 'none' },
  { method: 'POST', path: '/api/user/logout', body: 'json', upload: 'never', cache: 'clear', sessions: 'caller' },
];

/** Any other PATCH changes nothing anyone else sees (only tus uses it). */
const DEFAULT_PATCH: RequestRule = { body: 'json', upload: 'never', cache: 'keep', sessions: 'none' };
const DEFAULT_WRITE: RequestRule = { body: 'json', upload: 'never', cache: 'clear', sessions: 'none' };
const DEFAULT_READ: RequestRule = { body: 'json', upload: 'never', cache: 'keep', sessions: 'none' };

/** The path of a URL, without its query. */
export function pathOf(url: string): string {
  const query = url.indexOf('?');
  return query === -1 ? url : url.slice(0, query);
}

/** The rule of a request (method and path without query). */
export function ruleOf(method: string, path: string): RequestRule {
  for (const rule of ROUTE_RULES) {
    if (rule.method !== method) continue;
    if (rule.path.endsWith('/') ? path.startsWith(rule.path) : path === rule.path) return rule;
  }
  return method === 'GET' || method === 'HEAD' || method === 'OPTIONS' ? DEFAULT_READ : method === 'PATCH' ? DEFAULT_PATCH : DEFAULT_WRITE;
}

/** Whether a request counts as an upload, by its rule and whether it carries a body. */
export function countsAsUpload(rule: Pick<RequestRule, 'upload'>, hasBody: boolean): boolean {
  return rule.upload === 'always' || (rule.upload === 'with-body' && hasBody);
}

/** The proxied prefixes of a service, as @fastify/http-proxy is registered with them. */
export function proxiedPrefixes(): {
  prefix: string;
  upstream: Exclude<Upstream, 'gateway'>;
  methods: readonly string[];
  route: GatewayRoute;
}[] {
  return GATEWAY_ROUTES.filter((route) => route.proxy && route.upstream !== 'gateway').map((route) => ({
    prefix: route.path,
    upstream: route.upstream as Exclude<Upstream, 'gateway'>,
    methods: route.methods,
    route,
  }));
}

/**
 * The proxied route that answers a path (the prefix itself or anything under it), with the
 * label its metrics carry ('/p' or '/p/*'), for the paths fastify routes to a proxied prefix.
 * Routes declared one by one (a user's evidence) are fastify's to match: callers check them first.
 */
export function proxiedRouteOf(method: string, path: string): { route: GatewayRoute; label: string } | undefined {
  for (const route of GATEWAY_ROUTES) {
    if (!route.proxy || !route.methods.includes(method)) continue;
    if (path === route.path) return { route, label: route.path };
    if (path.startsWith(route.path) && path.charCodeAt(route.path.length) === 47 /* / */) return { route, label: `${route.path}/*` };
  }
  return undefined;
}

/** A declared path (fastify syntax: `:name` for one segment, a trailing `*` for the rest) as a regular expression. */
function patternOf(path: string): RegExp {
  const source = path
    .split(/(:[A-Za-z_]+|\*)/)
    .map((part) => (part.startsWith(':') ? '[^/]+' : part === '*' ? '.*' : part.replace(/[.+?^${}()|[\]\\]/g, '\\$&')))
    .join('');
  return new RegExp(`^${source}/?$`);
}

/** Routes declared one by one with a parameter: fastify prefers them to a proxied prefix they sit under. */
const PARAMETER_ROUTES = GATEWAY_ROUTES.filter((route) => !route.proxy && route.path.includes(':')).map((route) => patternOf(route.path));

/**
 * The proxied route of a GET or HEAD the proxy fast path may answer (its route says so, and no
 * route declared one by one takes the path), or undefined: the full path's then.
 */
export function fastPathRouteOf(method: string, path: string): { route: GatewayRoute; label: string } | undefined {
  for (const pattern of PARAMETER_ROUTES) if (pattern.test(path)) return undefined;
  const found = proxiedRouteOf(method, path);
  return found?.route.fastPath && ruleOf(method, path).sessions === 'none' ? found : undefined;
}
