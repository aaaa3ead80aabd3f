import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import proxyAddr from '@fastify/proxy-addr';
import fastifyCookie from '@fastify/cookie';
import { Pool, type Dispatcher } from 'undici';
import { setRequestCaller } from '@portal/platform';
import { SessionResolver, type ResolvedCaller } from '../sessions/session-resolver.js';
import { fastPathRouteOf, type Upstream } from '../routes/route-table.js';
import { hostOf, protocolOf, type TrustFunction } from './client-view.js';
import { inwardHeaders, requestEndToEnd } from './hop-by-hop.js';
import { PublicCache } from './public-cache.js';
import type { LimitDecision, ResponsePolicy } from './response-policy.js';

export interface ProxyFastPathOptions {
  /** The base URL of each service behind the gateway. */
  upstreams: Record<Exclude<Upstream, 'gateway'>, string>;
  /** The gateway's response policy: request id, headers, metrics and log line. */
  policy: ResponsePolicy;
  trust: TrustFunction | false;
  cookieName: string;
  /** The caller of a session cookie's key (SessionResolver.hash) when the session cache answers it at once (SessionResolver.cachedByKey). */
  cachedCaller: (key: string) => ResolvedCaller | null | undefined;
  /** The public cache, whose keys that are not known to be private go the full way. */
  publicCache: PublicCache | null;
  /** The general API limit, counted on the same counters as the full path's; null when off. */
  limit: () => ((request: { ip: string; url: string; routeOptions: { config: object } }) => Promise<LimitDecision>) | null;
  /**
   * Marks a request the fast path has counted on the limiter and hands back to the full path
   * because the service was not reached: the full path's limiter lets it through uncounted.
   */
  countedOnLimiter?: (req: IncomingMessage) => void;
  /** Counts what became of a request taken: answered here, or handed to the full path over the limit or with the service not reached. */
  counted?: (outcome: 'answered' | 'over_limit' | 'not_reached') => void;
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
const FULL_PATH_HEADERS = [
  'content-length',
  'transfer-encoding',
  'expect',
  'range',
  'if-none-match',
  'if-modified-since',
  'if-match',
  'if-unmodified-since',
  'if-range',
  'upgrade',
] as const;

/**
 * Proxies a signed-in participant's everyday reads (`GET /api/user`, their evidence list, …) in
 * front of fastify: the gateway's cost per request is then what moving the bytes costs, not
 * fastify's hook chain, @fastify/http-proxy's URL work and reply-from's stream plumbing.
 *
 * It takes only what the route table lets it (routes/route-table.ts: `fastPath`, nothing at the
 * gateway acting on the answer) and only what it can answer exactly as the full path would (tests
 * hold it to that, header by header: gateway-proxy-fast-path.test.ts): a GET or HEAD without a
 * body or conditions, on a plain path, from a caller with no session cookie or one the session
 * cache knows, to a URL the public cache knows to be private. It counts the request on the full
 * path's rate-limit counters, and writes its headers, metrics and log line through the gateway's
 * response policy and the header rules of hop-by-hop.ts, as the full path does. A refused request
 * (over the limit) and a request the service could not be asked (down, reset) are handed to the
 * full path untouched, which answers them as before.
 */
export function proxyFastPath(options: ProxyFastPathOptions): ProxyFastPath {
  const { trust, publicCache, policy } = options;
  // As @fastify/http-proxy's own pool for the same service.
  const services = Object.fromEntries(
    Object.entries(options.upstreams).map(([name, url]) => [
      name,
      {
        origin: new URL(url).origin,
        host: new URL(url).host,
        pool: new Pool(url, { connections: 64, pipelining: 1, keepAliveTimeout: 30_000 }),
      },
    ]),
  ) as Record<Exclude<Upstream, 'gateway'>, { origin: string; host: string; pool: Pool }>;

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
    if (!PLAIN_PATH.test(path)) return false;
    const found = fastPathRouteOf(method, path);
    if (!found || found.route.upstream === 'gateway') return false;
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
        if (known) setRequestCaller(req, known.identity);
      }
    }
    const protocol = protocolOf(req, trust);
    const host = hostOf(req, trust);
    if (publicCache && !publicCache.goesUpstream(method, PublicCache.keyOf(protocol, host, url))) return false;

    const ip = clientIp(req);
    const id = policy.requestId(req);
    const service = services[found.route.upstream];
    const forward = (decision: LimitDecision | null) =>
      send(req, res, { id, ip, protocol, host, caller, url, method, service, label: found.label, decision, startedAt, fullPath });
    const limit = options.limit();
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
    service: { origin: string; host: string; pool: Pool };
    label: string;
    decision: LimitDecision | null;
    startedAt: number;
    fullPath: (req: IncomingMessage, res: ServerResponse) => void;
  }

  function send(req: IncomingMessage, res: ServerResponse, request: Forwarded): void {
    if (res.destroyed) return;
    const inward = inwardHeaders(request, requestEndToEnd(req.headers));
    inward.host = request.service.host;

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
      onResponseStart(_controller, statusCode, upstreamHeaders) {
        if (statusCode < 200) return;
        headSent = true;
        const length = upstreamHeaders['content-length'];
        if (typeof length === 'string' && request.method !== 'HEAD' && statusCode !== 204 && statusCode !== 304) left = Number(length);
        res.writeHead(
          statusCode,
          policy.proxiedHead(request.protocol === 'https', request.id, request.decision, statusCode, upstreamHeaders),
        );
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
        policy.answered(request.method, request.url, request.label, res.statusCode, request.id, performance.now() - request.startedAt);
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
        policy.brokenOff(req, request.id, error);
        res.destroy(error);
      },
    };
    request.service.pool.dispatch({ origin: request.service.origin, method: request.method, path: request.url, headers: inward }, handler);
  }

  return {
    take,
    async close() {
      await Promise.all(Object.values(services).map((service) => service.pool.close()));
    },
  };
}
