import type { IncomingHttpHeaders, IncomingMessage, ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import proxyAddr from '@fastify/proxy-addr';
import fastifyCookie from '@fastify/cookie';
import { Pool, type Dispatcher } from 'undici';
import { SessionResolver, type ResolvedCaller } from '../sessions/session-resolver.js';
import { hostOf, protocolOf, type TrustFunction } from './client-view.js';
import { PublicCache, forEachEndToEnd } from './public-cache.js';

/** A proxied prefix the fast path may answer GETs and HEADs for, and the service behind it. */
export interface FastProxyRoute {
  prefix: string;
  upstream: string;
}

/** What the rate limiter decided for one request (fastify's `createRateLimit()`, the same counters as the full path's). */
export interface LimitDecision {
  isAllowed: boolean;
  isExceeded: boolean;
  max: number;
  remaining: number;
  ttlInSeconds: number;
}

export interface ProxyFastPathOptions {
  routes: FastProxyRoute[];
  /** The security headers of every answer over plain HTTP and over HTTPS (securityHeaderPairs). */
  securityHeaders: { http: [string, string][]; https: [string, string][] };
  trust: TrustFunction | false;
  requestId: (req: IncomingMessage) => string;
  cookieName: string;
  /** The caller of a session cookie's key (SessionResolver.hash) when the session cache answers it at once (SessionResolver.cachedByKey). */
  cachedCaller: (key: string) => ResolvedCaller | null | undefined;
  /** The public cache, whose keys that are not known to be private go the full way. */
  publicCache: PublicCache | null;
  /** The general API limit, counted on the same counters as the full path's; null when off. */
  limit: ((request: { ip: string; url: string; routeOptions: { config: object } }) => Promise<LimitDecision>) | null;
  /** The headers a service gets for a request (the gateway's inwardHeaders). */
  inwardHeaders: (
    request: { id: string; ip: string; protocol: string; host: string; caller: ResolvedCaller | null },
    headers: Record<string, string | string[] | undefined>,
  ) => Record<string, string | string[] | undefined>;
  /** Once an answer has ended (startedAt: performance.now() when the request came): metrics and the request log. */
  answered: (req: IncomingMessage, route: string, status: number, requestId: string, startedAt: number) => void;
  /**
   * Marks a request the fast path has counted on the limiter and hands back to the full path
   * because the service was not reached: the full path's limiter lets it through uncounted.
   */
  countedOnLimiter?: (req: IncomingMessage) => void;
  /** Counts what became of a request taken: answered here, or handed to the full path over the limit or with the service not reached. */
  counted?: (outcome: 'answered' | 'over_limit' | 'not_reached') => void;
  /** An answer that broke off after its head was sent (the service's body failed). */
  broken: (req: IncomingMessage, requestId: string, error: Error) => void;
}

export interface ProxyFastPath {
  /**
   * Takes the request (true) or leaves it to the full path (false). A request taken may still be
   * handed to `fullPath` later, untouched, when the limiter refuses it or the service cannot be
   * reached: the full path then answers it as it always does.
   */
  take(req: IncomingMessage, res: ServerResponse, fullPath: (req: IncomingMessage, res: ServerResponse) => void): boolean;
  close(): Promise<void>;
}

/**
 * Paths the fast path answers: plain segments (no dots, no escapes, no empty segments) under a
 * proxied prefix, with any query. Anything else (`..`, `%2F`, `//`, another case) is routed by
 * fastify, whatever it turns out to be.
 */
const PLAIN_PATH = /^\/api\/[a-z]+(?:\/[A-Za-z0-9_-]+)*\/?$/;
/** A request with a body, or one whose answer depends on more than the URL, goes the full way. */
const FULL_PATH_HEADERS = ['content-length', 'transfer-encoding', 'expect', 'range', 'if-none-match', 'if-modified-since', 'if-match', 'if-unmodified-since', 'if-range', 'upgrade'] as const;
/** Request headers that describe the client's connection, not the request (never sent to a service). */
const CONNECTION_HEADERS: ReadonlySet<string> = new Set(['connection', 'keep-alive', 'proxy-connection', 'te', 'trailer', 'transfer-encoding', 'upgrade', 'host']);
/** GET /api/user/{id}/evidence is evidence's, although it sits under identity's prefix. */
const USER_EVIDENCE = /^\/api\/user\/[^/]+\/evidence\/?$/;
/** Requests whose answers the full path's hooks act on (the session cache evicts on logout). */
const HOOKED = new Set(['/api/user/logout']);

/**
 * Proxies a signed-in participant's everyday reads (`GET /api/user`, their evidence list, …) in
 * front of fastify: the gateway's cost per request is then what moving the bytes costs, not
 * fastify's hook chain, @fastify/http-proxy's URL work and reply-from's stream plumbing.
 *
 * It takes only what it can answer exactly as the full path would (tests hold it to that,
 * header by header: gateway-proxy-fast-path.test.ts): a GET or HEAD without a body or conditions,
 * on a plain path under a proxied prefix, from a caller with no session cookie or one the session
 * cache knows, to a URL the public cache knows to be private. It counts the request on the full
 * path's rate-limit counters and sends the same headers (security headers, request id, rate-limit
 * headers, the service's headers without those of its connection) and the same identity token.
 * A refused request (over the limit) and a request the service could not be asked (down, reset)
 * are handed to the full path untouched, which answers them as before.
 */
export function proxyFastPath(options: ProxyFastPathOptions): ProxyFastPath {
  const { trust, publicCache, limit } = options;
  const pools = new Map<string, Pool>();
  const poolOf = (upstream: string): Pool => {
    let pool = pools.get(upstream);
    if (!pool) {
      // As @fastify/http-proxy's own pool for the same service.
      pool = new Pool(upstream, { connections: 64, pipelining: 1, keepAliveTimeout: 30_000 });
      pools.set(upstream, pool);
    }
    return pool;
  };
  /** The names of the headers the gateway sets itself, lower case. */
  const OWN_NAMES = new Set<string>(['x-request-id', 'x-ratelimit-limit', 'x-ratelimit-remaining', 'x-ratelimit-reset']);
  for (const [name] of [...options.securityHeaders.http, ...options.securityHeaders.https]) OWN_NAMES.add(name.toLowerCase());
  const routes = options.routes.map(({ prefix, upstream }) => ({ prefix, upstream: new URL(upstream), pool: poolOf(upstream) }));

  function routeOf(path: string) {
    for (const route of routes) {
      if (path === route.prefix) return { route, label: route.prefix };
      if (path.startsWith(route.prefix) && path.charCodeAt(route.prefix.length) === 47 /* / */) return { route, label: `${route.prefix}/*` };
    }
    return undefined;
  }

  /**
   * The session cache's key for a Cookie header (null: no session cookie). A phone's requests on
   * one kept-alive connection carry the same header: its key is kept with the connection, not
   * worked out (parsed and hashed) again for each request.
   */
  const keyOnConnection = new WeakMap<Socket, { cookie: string; key: string | null }>();
  function sessionKeyOf(socket: Socket, cookie: string): string | null {
    const last = keyOnConnection.get(socket);
    if (last !== undefined && last.cookie === cookie) return last.key;
    const rawId = fastifyCookie.fastifyCookie.parse(cookie)[options.cookieName];
    const key = rawId ? SessionResolver.hash(rawId) : null;
    keyOnConnection.set(socket, { cookie, key });
    return key;
  }

  function clientIp(req: IncomingMessage): string {
    if (trust === false) return req.socket.remoteAddress ?? '';
    const addresses = proxyAddr.all(req, trust);
    return addresses[addresses.length - 1] ?? '';
  }

  function take(req: IncomingMessage, res: ServerResponse, fullPath: (req: IncomingMessage, res: ServerResponse) => void): boolean {
    const startedAt = performance.now();
    const method = req.method;
    if (method !== 'GET' && method !== 'HEAD') return false;
    const url = req.url ?? '';
    const query = url.indexOf('?');
    const path = query === -1 ? url : url.slice(0, query);
    if (!PLAIN_PATH.test(path) || USER_EVIDENCE.test(path) || HOOKED.has(path)) return false;
    const found = routeOf(path);
    if (!found) return false;
    const headers = req.headers;
    for (const name of FULL_PATH_HEADERS) if (headers[name] !== undefined) return false;

    let caller: ResolvedCaller | null = null;
    const cookie = headers.cookie;
    if (cookie !== undefined) {
      const key = sessionKeyOf(req.socket, cookie);
      if (key !== null) {
        const known = options.cachedCaller(key);
        if (known === undefined) return false;
        caller = known;
      }
    }
    const protocol = protocolOf(req, trust);
    const host = hostOf(req, trust);
    if (publicCache && !publicCache.goesUpstream(method, PublicCache.keyOf(protocol, host, url))) return false;

    const ip = clientIp(req);
    const id = options.requestId(req);
    const forward = (decision: LimitDecision | null) =>
      send(req, res, { id, ip, protocol, host, caller, url, method, route: found.route, label: found.label, decision, startedAt, fullPath });
    if (!limit) {
      forward(null);
      return true;
    }
    limit({ ip, url, routeOptions: { config: {} } }).then(
      (decision) => {
        // Over the limit: the full path counts it once more (it is over either way) and answers the 429.
        if (decision.isExceeded) {
          options.counted?.('over_limit');
          fullPath(req, res);
        } else forward(decision);
      },
      () => fullPath(req, res),
    );
    return true;
  }

  interface Forwarded {
    id: string;
    ip: string;
    protocol: string;
    host: string;
    caller: ResolvedCaller | null;
    url: string;
    method: string;
    route: (typeof routes)[number];
    label: string;
    decision: LimitDecision | null;
    startedAt: number;
    fullPath: (req: IncomingMessage, res: ServerResponse) => void;
  }

  function send(req: IncomingMessage, res: ServerResponse, request: Forwarded): void {
    if (res.destroyed) return;
    // The request's headers as reply-from passes them on: without those of the client's connection.
    const copy: Record<string, string | string[] | undefined> = {};
    const incoming = req.headers;
    const named = incoming.connection !== undefined ? namedIn(incoming.connection) : null;
    for (const name in incoming) {
      if (!CONNECTION_HEADERS.has(name) && (named === null || !named.includes(name))) copy[name] = incoming[name];
    }
    const inward = options.inwardHeaders(request, copy);
    inward.host = request.route.upstream.host;

    let headSent = false;
    // The chunk that completes a body of known length is sent with res.end(): a body that comes
    // in one chunk (most API answers) leaves in one write together with the head.
    let left = -1;
    let ended = false;
    const handler: Dispatcher.DispatchHandler = {
      onRequestStart(controller) {
        res.once('close', () => {
          if (!res.writableFinished) controller.abort(new Error('the client went away'));
        });
      },
      onResponseStart(controller, statusCode, upstreamHeaders) {
        if (statusCode < 200) return;
        headSent = true;
        const length = upstreamHeaders['content-length'];
        if (typeof length === 'string' && request.method !== 'HEAD' && statusCode !== 204 && statusCode !== 304) left = Number(length);
        res.writeHead(statusCode, headOf(request, statusCode, upstreamHeaders));
      },
      onResponseData(controller, chunk) {
        if (left !== -1) {
          left -= chunk.length;
          if (left <= 0) {
            ended = true;
            res.end(chunk);
            return;
          }
        }
        if (!res.write(chunk)) {
          controller.pause();
          res.once('drain', () => controller.resume());
        }
      },
      onResponseEnd() {
        if (!ended) res.end();
        options.counted?.('answered');
        options.answered(req, request.label, res.statusCode, request.id, request.startedAt);
      },
      onResponseError(_controller, error) {
        if (!headSent) {
          // Not asked (the service is down, a kept connection was reset): the full path asks again
          // and answers as it does, with its own error statuses and log lines.
          if (res.destroyed) return;
          options.counted?.('not_reached');
          const decision = request.decision;
          if (decision && !decision.isAllowed) {
            // Counted once, here: the full path's limiter leaves it alone, and the answer still
            // says what the count is.
            options.countedOnLimiter?.(req);
            res.setHeader('x-ratelimit-limit', String(decision.max));
            res.setHeader('x-ratelimit-remaining', String(decision.remaining));
            res.setHeader('x-ratelimit-reset', String(decision.ttlInSeconds));
          }
          request.fullPath(req, res);
          return;
        }
        options.broken(req, request.id, error);
        res.destroy(error);
      },
    };
    request.route.pool.dispatch({ origin: request.route.upstream.origin, method: request.method, path: request.url, headers: inward }, handler);
  }

  function headOf(request: Forwarded, status: number, upstream: IncomingHttpHeaders): string[] {
    const head: string[] = [];
    for (const [name, value] of request.protocol === 'https' ? options.securityHeaders.https : options.securityHeaders.http) head.push(name, value);
    head.push('x-request-id', request.id);
    const decision = request.decision;
    if (decision && !decision.isAllowed) {
      head.push('x-ratelimit-limit', String(decision.max), 'x-ratelimit-remaining', String(decision.remaining), 'x-ratelimit-reset', String(decision.ttlInSeconds));
    }
    const ownCount = head.length;
    // The service's headers without those of its connection, by the full path's rules.
    forEachEndToEnd(upstream, (name, value) => {
      // An answer without a body says no length (as the full path sends it).
      if (value === undefined || (status === 204 && name === 'content-length')) return;
      // A header the gateway set too (the service's own x-request-id, a security header): the
      // service's value, in the gateway's place, as fastify's reply merges them.
      const own = OWN_NAMES.has(name) ? ownIndex(head, ownCount, name) : -1;
      if (own !== -1 && !Array.isArray(value)) head[own + 1] = value;
      else if (Array.isArray(value)) for (const one of value) head.push(name, one);
      else head.push(name, value);
    });
    return head;
  }

  /** The header names a Connection header lists. */
  function namedIn(connection: string | string[]): string[] {
    return String(connection).toLowerCase().split(',').map((name) => name.trim());
  }

  /** Where a header the gateway set sits in the head list (names are lower case), or -1. */
  function ownIndex(head: string[], ownCount: number, name: string): number {
    for (let i = 0; i < ownCount; i += 2) if (head[i]!.toLowerCase() === name) return i;
    return -1;
  }

  return {
    take,
    async close() {
      await Promise.all([...pools.values()].map((pool) => pool.close()));
    },
  };
}
