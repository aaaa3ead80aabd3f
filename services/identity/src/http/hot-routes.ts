import { createHash } from 'node:crypto';
import type { IncomingMessage, RequestListener, ServerResponse } from 'node:http';
import {
  IDENTITY_HEADER,
  httpRequestContext,
  logRequest,
  runInHttpRequestContext,
  setRequestCaller,
  type CallerIdentity,
  type IdentityTokens,
  type Logger,
  type ServiceMetrics,
} from '@portal/platform';
import type { UserService } from '../domain/user-service.js';
import { toUserResponse } from '../domain/user-record.js';

export interface HotRouteDeps {
  tokens: IdentityTokens;
  users: UserService;
  logger: Logger;
  metrics: ServiceMetrics;
}

/** The paths answered here, as the express routes name them (and as the metrics record them). */
const HOT_PATHS = new Set(['/api/user', '/api/session']);

/**
 * GET /api/user and GET /api/session, the web app's most frequent calls (every page asks who is
 * signed in), answered before the express app: its router walks every middleware and route of the
 * service for them, which cost more than the answer itself.
 *
 * Only the plain case is answered here: a GET of exactly that path (no query), without a
 * conditional header or a body, whose identity token verifies and whose user exists, or a visitor's
 * GET /api/session. Everything else (no or a bad token, a deleted user, an error, HEAD, a
 * revalidation) goes to the express app untouched, which answers it as it always did. The answers
 * are the express app's to the byte: the same headers (request id, Cache-Control, Content-Type,
 * Content-Length, the weak ETag express computes), the same request log line and the same
 * latency metric (tests/integration/identity-hot-routes.test.ts compares both, header by header).
 */
export function withHotRoutes(app: RequestListener, deps: HotRouteDeps): RequestListener {
  // Both paths run in the request's one context (the express app's requestContext() finds it made).
  return (req, res) => runInHttpRequestContext(req, () => hotOrExpress(app, deps, req, res));
}

function hotOrExpress(app: RequestListener, deps: HotRouteDeps, req: IncomingMessage, res: ServerResponse): void {
  const path = req.url ?? '';
  const headers = req.headers;
  if (
    req.method !== 'GET' ||
    !HOT_PATHS.has(path) ||
    headers['if-none-match'] !== undefined ||
    headers['if-modified-since'] !== undefined ||
    // A GET with a body is express's to read (a malformed JSON body is a 400 there).
    headers['transfer-encoding'] !== undefined ||
    (headers['content-length'] !== undefined && headers['content-length'] !== '0')
  ) {
    app(req, res);
    return;
  }
  const startedAt = Date.now();
  const started = process.hrtime.bigint();
  const token = req.headers[IDENTITY_HEADER];
  if (token === undefined) {
    // A visitor: only the session probe answers them (GET /api/user refuses, in express).
    if (path === '/api/session') answer(req, res, path, '{"user":null}', startedAt, started, deps);
    else app(req, res);
    return;
  }
  if (typeof token !== 'string' || token.length === 0) {
    app(req, res);
    return;
  }
  const known = deps.tokens.knownCaller(token);
  const me = (caller: CallerIdentity) => {
    setRequestCaller(req, caller);
    return deps.users.me(caller);
  };
  (known ? me(known) : deps.tokens.verifyCaller(token).then(me)).then(
    (user) => {
      const body = JSON.stringify(path === '/api/user' ? toUserResponse(user) : { user: toUserResponse(user) });
      answer(req, res, path, body, startedAt, started, deps);
    },
    // A refusal or a failure: the express app answers (and logs) it as it always has.
    () => app(req, res),
  );
}

function answer(
  req: IncomingMessage,
  res: ServerResponse,
  path: string,
  body: string,
  startedAt: number,
  started: bigint,
  deps: HotRouteDeps,
): void {
  const id = httpRequestContext(req).requestId!;
  const bytes = Buffer.from(body, 'utf8');
  // In express's order: the request id (request logging), the route's Cache-Control, then res.json's.
  // One writeHead with every header, and the body as a string: Node sends the head and the body in
  // one write (a Buffer body would go out as a second chunk of a writev).
  res.writeHead(200, [
    'x-request-id',
    id,
    'Cache-Control',
    'no-store',
    'Content-Type',
    'application/json; charset=utf-8',
    'Content-Length',
    String(bytes.length),
    'ETag',
    weakEtag(bytes),
  ]);
  res.end(body);
  deps.metrics.observeRequest('GET', path, 200, Number(process.hrtime.bigint() - started) / 1e9);
  logRequest(deps.logger, { id, method: 'GET', url: path }, 200, startedAt);
}

/** Express's default ETag (the etag package, weak): W/"<length in hex>-<SHA-1, base64, 27 characters>". */
function weakEtag(bytes: Buffer): string {
  const hash = createHash('sha1').update(bytes).digest('base64').substring(0, 27);
  return `W/"${bytes.length.toString(16)}-${hash}"`;
}
