import { randomUUID } from 'node:crypto';
import { existsSync } from 'node:fs';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { join, resolve } from 'node:path';
import { hostname } from 'node:os';
import { Readable, type Duplex } from 'node:stream';
import Fastify, { LogController, type FastifyBaseLogger, type FastifyInstance, type FastifyReply, type FastifyRequest } from 'fastify';
import fastifyCookie from '@fastify/cookie';
import fastifyHttpProxy from '@fastify/http-proxy';
import fastifyReplyFrom from '@fastify/reply-from';
import fastifyRateLimit from '@fastify/rate-limit';
import fastifyStatic from '@fastify/static';
import proxyAddr from '@fastify/proxy-addr';
import { Pool } from 'undici';
import type { Redis } from 'ioredis';
import {
  CLIENT_ROUTES,
  routeHtmlFile,
  MESSAGES,
  TOPICS,
  eventEnvelopeSchema,
  sessionEventSchema,
  userEventSchema,
} from '@portal/contracts';
import {
  IDENTITY_HEADER,
  IdentityTokens,
  SERVICE_TOKEN_HEADER,
  redactUrl,
  runReadinessChecks,
  type EventBus,
  type Logger,
  type ServedRoute,
  type ServiceMetrics,
  type Subscription,
} from '@portal/platform';
import type { GatewaySettings } from '../config.js';
import { appShortName } from '../web/app-short-name.js';
import { IdentityUnavailableError, SessionResolver, type ResolvedCaller } from '../sessions/session-resolver.js';
import { isCrossSiteWrite, securityHeaderPairs, securityHeaders } from './security.js';
import { guardRequestBodies } from './upload-guard.js';
import { MemoryUploadSlots, RedisUploadSlots } from '../uploads/upload-slots.js';
import { handOver, isUploadChunk, type InProcessHandler } from './in-process-uploads.js';
import { PublicCache, readBody, withoutHopByHop, type CachedAnswer, type CacheTicket } from './public-cache.js';
import { answerFromMemory } from './answer-from-memory.js';
import type { TrustFunction } from './client-view.js';
import { proxyFastPath, type LimitDecision, type ProxyFastPath } from './proxy-fast-path.js';

declare module 'fastify' {
  interface FastifyRequest {
    caller: ResolvedCaller | null;
    /** This request's part in the public cache, when it leads the upstream request for its key. */
    publicCacheTicket: CacheTicket | null;
  }
}

export interface GatewayDeps {
  logger: Logger;
  /** Shared rate-limit counters across gateway replicas (the distributed mode). */
  redis?: Redis;
  /** Names this instance's own consumer group (every gateway must see every revocation). */
  instanceId?: string;
  /** Where the gateway's metrics are kept (served on a port of their own, never the public one). */
  metrics?: ServiceMetrics;
  /** Revocation events evict cached sessions at once; without a bus only the cache TTL applies. */
  bus?: EventBus;
  /** The OpenAPI document served at /api/openapi.json. */
  openapi: object;
  /**
   * The evidence service's resumable uploads in this same process (all-in-one): the chunks of an
   * upload (PATCH /api/evidence/uploads/{id}) are handed to it directly instead of over loopback
   * HTTP (handOver). Every other request is proxied as usual.
   */
  evidenceUploadsInProcess?: InProcessHandler;
}

export interface Gateway {
  app: FastifyInstance;
  /** Every route the gateway declared (proxied prefixes included), in the order declared. */
  routes: ServedRoute[];
  start(): Promise<string>;
  stop(): Promise<void>;
}

/** A proxied service's answer as @fastify/reply-from hands it over. */
interface UpstreamAnswer {
  statusCode: number;
  headers: Record<string, string | string[] | undefined>;
  stream: Readable;
}

const REQUEST_ID = /^[A-Za-z0-9._-]{1,100}$/;
/** The web app's service worker and the Workbox files it may load (web/vite.config.ts). */
const SERVICE_WORKER_FILE = /^[\\/](?:sw\.js|workbox-[\w-]+\.js)(?:\.(?:br|gz))?$/;

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
const CLIENT_ROUTE_SET = new Set<string>(CLIENT_ROUTES);
/** Request headers never passed on to a service as the client sent them (the gateway sets its own). */
const DROPPED_INWARD_HEADERS = new Set<string>([
  'cookie',
  IDENTITY_HEADER,
  SERVICE_TOKEN_HEADER,
  'x-forwarded-for',
  'x-forwarded-proto',
  'x-forwarded-host',
  'x-request-id',
  // Answered by the gateway itself (100 Continue, or an early 413); undici refuses to send it.
  'expect',
]);

/** pino's level check; FastifyBaseLogger does not declare it, so a logger without it logs as before. */
function isLevelEnabled(log: FastifyBaseLogger, level: string): boolean {
  const check = (log as FastifyBaseLogger & { isLevelEnabled?: (level: string) => boolean }).isLevelEnabled;
  return typeof check === 'function' ? check.call(log, level) : true;
}

/**
 * Which service answers which paths. The profile update (PUT /api/evidence/user) belongs to
 * identity although it sits under /api/evidence; a user's evidence (GET /api/user/{id}/evidence)
 * belongs to evidence although it sits under /api/user (a route of its own, below).
 */
function upstreams(settings: GatewaySettings) {
  return [
    { prefix: '/api/user', upstream: settings.identityUrl },
    { prefix: '/api/session', upstream: settings.identityUrl, httpMethods: ['GET', 'HEAD'] },
    { prefix: '/api/email', upstream: settings.identityUrl },
    // The audit log is kept by identity (docs/ARCHITECTURE.md, "Audit log").
    { prefix: '/api/admin', upstream: settings.identityUrl, httpMethods: ['GET', 'HEAD'] },
    { prefix: '/api/evidence/user', upstream: settings.identityUrl, httpMethods: ['PUT'] },
    { prefix: '/api/evidence', upstream: settings.evidenceUrl },
    { prefix: '/media', upstream: settings.evidenceUrl, httpMethods: ['GET', 'HEAD'] },
  ];
}

/** proxy-addr's trust function for a hop count: the socket's peer is hop 0, its X-Forwarded-For entry hop 1, … */
function trustNearestHops(hops: number): TrustFunction {
  return (_address, hop) => hop < hops;
}

/** TRUST_PROXY as one function, which fastify and the public cache's fast path both use. */
function trustFunction(trustProxy: GatewaySettings['trustProxy']): TrustFunction | false {
  if (trustProxy === false) return false;
  return typeof trustProxy === 'number' ? trustNearestHops(trustProxy) : proxyAddr.compile(trustProxy);
}

/**
 * A request Node cannot read (a body shorter than its Content-Length when the client stops, bytes
 * after the body that are no request, headers too large, too slow) is answered on the socket in
 * the portal's error shape, as fastify's own handler does in its own, and the connection closed.
 */
function answerUnreadableRequest(error: Error & { code?: string }, socket: Duplex): void {
  if (error.code === 'ECONNRESET' || socket.destroyed) return;
  const [status, label, message] =
    error.code === 'ERR_HTTP_REQUEST_TIMEOUT'
      ? [408, 'Request Timeout', 'The request took too long to arrive']
      : error.code === 'HPE_HEADER_OVERFLOW'
        ? [431, 'Request Header Fields Too Large', 'The request headers are too large']
        : [400, 'Bad Request', 'The request could not be read: it was cut off or malformed'];
  const body = JSON.stringify({ code: status === 400 ? 'validation_failed' : 'bad_request', message });
  if (socket.writable) {
    socket.write(
      `HTTP/1.1 ${status} ${label}\r\nContent-Length: ${Buffer.byteLength(body)}\r\nContent-Type: application/json; charset=utf-8\r\nConnection: close\r\n\r\n${body}`,
    );
  }
  socket.destroy();
}

export async function createGateway(settings: GatewaySettings, deps: GatewayDeps): Promise<Gateway> {
  const tokens = new IdentityTokens(settings.internalSecret);
  const resolver = new SessionResolver(settings.identityUrl, tokens, settings.sessionCacheTtlMs);
  const trust = trustFunction(settings.trustProxy);
  const requestId = (req: IncomingMessage): string => {
    const incoming = req.headers['x-request-id'];
    return trust !== false && typeof incoming === 'string' && REQUEST_ID.test(incoming) ? incoming : randomUUID();
  };
  const publicCache = settings.publicCacheTtlMs > 0 ? new PublicCache({ ttlMs: settings.publicCacheTtlMs }) : null;
  /** Answers public pages kept in memory before fastify sees the request (set below, once the hooks it mirrors exist). */
  let fromMemory: ((req: IncomingMessage, res: ServerResponse) => boolean) | null = null;
  /** Proxies signed-in reads before fastify sees the request (set below, once the hooks it mirrors exist). */
  let fastProxy: ProxyFastPath | null = null;
  let closing = false;
  const app = Fastify({
    loggerInstance: deps.logger as FastifyBaseLogger,
    // A hop count as Express reads it (the nearest N proxies are believed); fastify's own number
    // setting believes no X-Forwarded-* at all.
    trustProxy: trust,
    // One line per request comes from the onResponse hook below, not from fastify itself.
    logController: new LogController({ disableRequestLogging: true }),
    requestIdHeader: false,
    genReqId: requestId,
    // fastify's own server, with one check in front: a public page in memory is answered there.
    serverFactory: (handler, factoryOptions) => {
      // fastify hands its processed options (defaults applied) to the factory.
      const options = factoryOptions as { http?: object; keepAliveTimeout: number; requestTimeout: number; connectionTimeout: number; maxRequestsPerSocket: number };
      const server = createServer(options.http ?? {}, (req, res) => {
        if (closing) handler(req, res);
        else if (fromMemory?.(req, res)) return;
        else if (!fastProxy?.take(req, res, handler)) handler(req, res);
      });
      // What fastify sets on the server it makes itself.
      server.keepAliveTimeout = options.keepAliveTimeout;
      server.requestTimeout = options.requestTimeout;
      server.setTimeout(options.connectionTimeout);
      if (options.maxRequestsPerSocket > 0) server.maxRequestsPerSocket = options.maxRequestsPerSocket;
      return server;
    },
    bodyLimit: 64 * 1024,
    return503OnClosing: true,
    clientErrorHandler: answerUnreadableRequest,
  });
  app.decorateRequest('caller', null);
  app.decorateRequest('publicCacheTicket', null);
  // While closing, fastify answers 503 (return503OnClosing): so does everything that reaches it.
  app.addHook('preClose', (done) => {
    closing = true;
    done();
  });
  const cacheOutcomes = deps.metrics?.counter(
    'portal_gateway_public_cache_total',
    'Public API answers by how the gateway cache served them: hit, coalesced (waited for another request), miss (stored), pass',
    ['outcome'],
  );
  const routes: ServedRoute[] = [];
  app.addHook('onRoute', (route) => {
    for (const method of [route.method].flat()) routes.push({ method, path: route.url });
  });

  app.setErrorHandler((error: { statusCode?: number; code?: string; message: string }, request, reply) => {
    const status = error.statusCode && error.statusCode >= 400 ? error.statusCode : 500;
    // A client that went away mid-request (a phone losing signal during an upload) is no fault here.
    const clientGone = request.raw.destroyed || request.raw.socket?.destroyed === true;
    if (clientGone) request.log.info({ err: error }, 'the client went away before its answer');
    else if (status >= 500) request.log.error({ err: error }, 'gateway error');
    const message =
      status === 429
        ? MESSAGES.tooManyRequests
        : status === 502 || status === 503 || status === 504
          ? 'The service is not answering right now. Please try again shortly.'
          : status >= 500
            ? MESSAGES.internal
            : error.message;
    const code = status === 429 ? 'rate_limited' : status >= 500 ? 'internal' : (error.code ?? 'validation_failed');
    void reply.status(status).send({ code, message });
  });

  // Callback-style hooks where nothing is awaited: an async hook costs a promise per request.
  app.addHook('onRequest', (request, reply, done) => {
    void reply.header('x-request-id', request.id);
    done();
  });
  app.addHook('onResponse', (request, reply, done) => {
    deps.metrics?.observeRequest(request.method, request.routeOptions.url ?? 'unmatched', reply.statusCode, reply.elapsedTime / 1000);
    const level = reply.statusCode >= 500 ? 'error' : reply.statusCode >= 400 ? 'info' : 'debug';
    // Most answers are 2xx, logged at debug, which production does not write: skip building the line.
    if (isLevelEnabled(request.log, level)) {
      request.log[level](
        { req: { id: request.id, method: request.method, url: redactUrl(request.url) }, status: reply.statusCode, ms: reply.elapsedTime },
        'request',
      );
    }
    done();
  });

  app.addHook('onRequest', securityHeaders(settings.publicConfig));
  // One participant's running uploads: counted in Redis when the gateways share one (replicas
  // behind a load balancer), else in this process.
  const uploadSlots = deps.redis ? new RedisUploadSlots(deps.redis) : new MemoryUploadSlots();
  const uploads = guardRequestBodies(app, settings.uploads, uploadSlots);
  await app.register(fastifyCookie);

  // --- the API -----------------------------------------------------------------------------
  const countedByFastPath = new WeakSet<IncomingMessage>();
  /** The general API limit on the API's own counters, for the proxy fast path (null when off). */
  let apiLimit: ((request: { ip: string; url: string; routeOptions: { config: object } }) => Promise<LimitDecision>) | null = null;
  await app.register(async (api) => {
    if (settings.rateLimitPerMinute > 0) {
      await api.register(fastifyRateLimit, {
        max: settings.rateLimitPerMinute,
        timeWindow: 60_000,
        ...(deps.redis ? { redis: deps.redis, nameSpace: 'portal:gateway-rate-limit:' } : {}),
        // Pictures and media are cheap and cacheable, and an archive page asks for dozens.
        // A request the proxy fast path counted already, then handed over (its service was not reached), is not counted twice.
        allowList: (request) => request.url.startsWith('/media/') || countedByFastPath.has(request.raw),
        errorResponseBuilder: () => ({ statusCode: 429, code: 'rate_limited', message: MESSAGES.tooManyRequests }),
      });
      // Without options: the limiter above, its store and its settings (@fastify/rate-limit's createRateLimit).
      apiLimit = (api as unknown as { createRateLimit(): typeof apiLimit }).createRateLimit();
    }

    if (publicCache) {
      // Before the session is resolved: a public answer is the same for every caller.
      api.addHook('onRequest', (request, reply, done) => {
        const found = publicCache.lookup(request);
        switch (found.kind) {
          case 'hit':
            cacheOutcomes?.inc({ outcome: 'hit' });
            sendCached(reply, found.answer);
            return;
          case 'wait':
            void PublicCache.wait(found.answer).then((answer) => {
              if (answer && !reply.sent) {
                cacheOutcomes?.inc({ outcome: 'coalesced' });
                sendCached(reply, answer);
              } else {
                done();
              }
            });
            return;
          case 'lead':
            request.publicCacheTicket = found.ticket;
            done();
            return;
          default:
            done();
        }
      });
      // A request that led and ended without a storable answer (an error, a private answer, a
      // client gone) lets its waiters go upstream themselves.
      api.addHook('onResponse', (request, _reply, done) => {
        request.publicCacheTicket?.settle?.(null);
        done();
      });
      api.addHook('onRequestAbort', (request, done) => {
        request.publicCacheTicket?.settle?.(null);
        done();
      });
      // A write through this gateway empties the cache before its answer leaves, so whoever made
      // the change sees it in their very next request. A resumable upload's chunks (PATCH) change
      // nothing anyone sees; the item they make announces itself on the bus. A change to a user
      // (a rename, an avatar, a deletion: PUT or DELETE to identity) reaches the archive through
      // evidence's consumer a moment later: no answer is stored until that has settled.
      api.addHook('onSend', (request, _reply, payload, done) => {
        const method = request.method;
        if (method !== 'GET' && method !== 'HEAD' && method !== 'OPTIONS' && method !== 'PATCH') {
          const url = request.url;
          // Watching the onboarding video changes nothing the archive shows (and announces no
          // user.updated to settle on).
          const userChange =
            (method === 'PUT' || method === 'DELETE') &&
            (url.startsWith('/api/user/') || url.startsWith('/api/evidence/user')) &&
            !url.startsWith('/api/user/watched/');
          publicCache.clear({ settle: userChange });
        }
        done(null, payload);
      });
    }

    // Callback style: most requests carry a session the cache knows, answered without a promise.
    api.addHook('onRequest', (request, reply, done) => {
      if (isCrossSiteWrite(request.method, request.headers, request.host)) {
        void reply.status(403).send({ code: 'cross_site_request', message: MESSAGES.crossSite });
        return;
      }
      const rawId = request.cookies[settings.cookieName];
      if (!rawId) {
        done();
        return;
      }
      const known = resolver.cached(rawId);
      if (known !== undefined) {
        request.caller = known;
        done();
        return;
      }
      resolver.resolve(rawId).then(
        (caller) => {
          request.caller = caller;
          done();
        },
        (error: unknown) => {
          if (!(error instanceof IdentityUnavailableError)) {
            done(error as Error);
            return;
          }
          request.log.warn({ err: error }, 'session not resolved');
          void reply.status(503).send({ code: 'internal', message: 'Sign-in is not available right now. Please try again shortly.' });
        },
      );
    });

    api.addHook('onRequest', (request, reply, done) => {
      const counted = uploads.countUploads(request, reply);
      if (counted === true) done();
      else if (counted !== false) void counted.then((taken) => taken && done());
    });

    api.addHook('onResponse', (request, reply, done) => {
      if (request.url === '/api/user/logout' && request.caller) resolver.evictSessions([request.caller.identity.sessionId]);
      // The onboarding flag travels in the caller's token: a participant who has just watched the
      // video may add evidence with their very next request (other gateways hear the event).
      if (request.method === 'PUT' && request.url.startsWith('/api/user/watched/') && reply.statusCode === 200) {
        const userId = request.url.slice('/api/user/watched/'.length).split('?')[0] ?? '';
        resolver.evictUser(/^[\w-]+$/.test(userId) ? userId : '');
      }
      done();
    });

    api.get('/api/config', async (_request, reply) => {
      void reply.header('cache-control', 'public, max-age=60');
      return settings.publicConfig;
    });
    api.get('/api/openapi.json', async (_request, reply) => {
      void reply.header('cache-control', 'public, max-age=300');
      return deps.openapi;
    });

    const uploadsInProcess = deps.evidenceUploadsInProcess;
    for (const { prefix, upstream, httpMethods } of upstreams(settings)) {
      await api.register(fastifyHttpProxy, {
        upstream,
        prefix,
        rewritePrefix: prefix,
        ...(httpMethods ? { httpMethods } : {}),
        ...(uploadsInProcess && upstream === settings.evidenceUrl
          ? {
              handler: (request: FastifyRequest, reply: FastifyReply, dest: string, options: object) => {
                // A body the content-type parsers did not pass on as the guarded stream goes the usual way.
                if (isUploadChunk(request.method, request.url) && request.body instanceof Readable) {
                  handOver(request, reply, inwardHeaders(request, request.headers), uploadsInProcess);
                  return reply;
                }
                return reply.from(dest, options);
              },
            }
          : {}),
        undici: { connections: 64, pipelining: 1, keepAliveTimeout: 30_000 },
        // One log line per request is written by the onResponse hook above.
        disableRequestLogging: true,
        replyOptions: {
          rewriteRequestHeaders: (request, headers) => inwardHeaders(request, headers),
          // The services' keep-alive and framing headers describe the loopback connection, not the client's.
          rewriteHeaders: (headers) => withoutHopByHop(headers),
          // reply-from's types name a server response; what it passes is undici's answer (status, headers, body stream).
          onResponse: (request, reply, response) =>
            answerFromUpstream(request as FastifyRequest, reply as FastifyReply, response as unknown as UpstreamAnswer),
        },
      });
    }

    await api.register(async (scope) => {
      await scope.register(fastifyReplyFrom, {
        base: settings.evidenceUrl,
        undici: { connections: 16, pipelining: 1, keepAliveTimeout: 30_000 },
        disableRequestLogging: true,
      });
      scope.get('/api/user/:id/evidence', (request, reply) => {
        void reply.from(request.url, { rewriteRequestHeaders: (req, headers) => inwardHeaders(req as FastifyRequest, headers) });
      });
    });

    api.all('/api/*', async (_request, reply) => reply.status(404).send({ code: 'not_found', message: MESSAGES.notFound }));
  });

  // --- health --------------------------------------------------------------------------------
  const healthPools = { identity: new Pool(settings.identityUrl, { connections: 1 }), evidence: new Pool(settings.evidenceUrl, { connections: 1 }) };
  const probe = (pool: Pool) => async () => {
    const response = await pool.request({ method: 'GET', path: '/healthz', headersTimeout: 2000, bodyTimeout: 2000 });
    await response.body.dump();
    if (response.statusCode !== 200) throw new Error(`answered ${response.statusCode}`);
  };
  const readiness = [
    { name: 'identity', check: probe(healthPools.identity) },
    { name: 'evidence', check: probe(healthPools.evidence) },
  ];
  deps.metrics?.watchDependencies(readiness);
  app.get('/healthz', async () => ({ status: 'ok' }));
  // Ready while this gateway serves: the web app and the cached public archive need neither
  // identity nor evidence, so their slowness is reported ("degraded"), not made a 503 for all.
  app.get('/readyz', async (_request, reply) => {
    const { ready, body } = await runReadinessChecks(readiness);
    return reply.status(ready ? 200 : 503).send(body);
  });

  // --- the web app ---------------------------------------------------------------------------
  const webRoot = resolve(settings.webDist);
  const webBuilt = existsSync(join(webRoot, 'index.html'));
  // A client route's own copy of index.html, which also preloads the route's page (the web
  // build's route-html/), or index.html itself for a build without them.
  const routePages = new Map<string, string>(
    CLIENT_ROUTES.map((route) => [route, existsSync(join(webRoot, routeHtmlFile(route))) ? routeHtmlFile(route) : 'index.html']),
  );
  const pageOfRoute = (route: string) => routePages.get(route) ?? 'index.html';
  if (webBuilt) {
    await app.register(fastifyStatic, {
      root: webRoot,
      prefix: '/',
      index: false,
      // The build has .br and .gz beside each text file (web/vite.config.ts): sent as such to a
      // browser that accepts them (Vary: accept-encoding), the plain file to any other.
      preCompressed: true,
      cacheControl: false,
      setHeaders: (res, path) => {
        // @fastify/static picks the encoding from Accept-Encoding but does not say so: caches
        // between the gateway and the browser must keep one copy per encoding.
        res.setHeader('vary', 'accept-encoding');
        // Hashed file names never change content: cache them for a year. Everything else is
        // revalidated, so a new deployment reaches phones at once.
        // The bundled onboarding video changes only with a release: phones may keep it a day.
        // The service worker (sw.js) and its helpers are never kept: a new release must reach an
        // installed app at its next check, whatever a cache on the way would like.
        res.setHeader(
          'cache-control',
          path.includes(join(webRoot, 'assets'))
            ? 'public, max-age=31536000, immutable'
            : path.includes(join(webRoot, 'onboarding'))
              ? 'public, max-age=86400'
              : SERVICE_WORKER_FILE.test(path.slice(webRoot.length))
                ? 'no-cache, max-age=0, must-revalidate'
                : 'no-cache',
        );
      },
    });
    // The root is a folder to the static plugin; it is the app's entry like every client route.
    app.get('/', async (_request, reply) => reply.header('cache-control', 'no-cache').sendFile(pageOfRoute('/')));
    // The installable app's manifest, named after this run's product (PRODUCT_NAME), not the build.
    const manifest = JSON.stringify(webAppManifest(settings.publicConfig.productName, settings.productShortName ?? undefined));
    app.get('/manifest.webmanifest', async (_request, reply) =>
      reply.header('cache-control', 'no-cache').type('application/manifest+json; charset=utf-8').send(manifest),
    );
  } else {
    deps.logger.warn({ webRoot }, 'the web app is not built (npm run build); only the API is served');
  }

  app.setNotFoundHandler(async (request: FastifyRequest, reply: FastifyReply) => {
    const path = request.url.split('?')[0] ?? '/';
    const wantsPage =
      (request.method === 'GET' || request.method === 'HEAD') && !path.startsWith('/api/') && !path.startsWith('/assets/') && !path.startsWith('/media/');
    if (!wantsPage) return reply.status(404).send({ code: 'not_found', message: MESSAGES.notFound });
    if (!webBuilt) {
      return reply.status(503).type('text/plain').send('The web app is not built yet. Run: npm run build');
    }
    void reply.header('cache-control', 'no-cache');
    return CLIENT_ROUTE_SET.has(path) ? reply.sendFile(pageOfRoute(path)) : reply.status(404).sendFile('index.html');
  });

  if (publicCache) {
    fromMemory = answerFromMemory({
      cache: publicCache,
      securityHeaders: { http: securityHeaderPairs(settings.publicConfig, false), https: securityHeaderPairs(settings.publicConfig, true) },
      trust,
      requestId,
      // What the onResponse hooks above record for an answer from memory: the hit, the route's
      // latency, and the request line when debug logging is on.
      answered: (req, answer, status, id, startedAt) => {
        cacheOutcomes?.inc({ outcome: 'hit' });
        recordAnswer(req, answer.route, status, id, startedAt);
      },
    });
  }

  if (settings.proxyFastPath) {
    const fastPathOutcomes = deps.metrics?.counter(
      'portal_gateway_proxy_fast_path_total',
      'Signed-in reads the proxy fast path took, by what became of them: answered, over_limit or not_reached (both then answered by the full path)',
      ['outcome'],
    );
    fastProxy = proxyFastPath({
      routes: upstreams(settings)
        .filter(({ prefix, httpMethods }) => prefix.startsWith('/api/') && (!httpMethods || httpMethods.includes('GET')))
        .map(({ prefix, upstream }) => ({ prefix, upstream })),
      securityHeaders: { http: securityHeaderPairs(settings.publicConfig, false), https: securityHeaderPairs(settings.publicConfig, true) },
      trust,
      requestId,
      cookieName: settings.cookieName,
      cachedCaller: (key) => resolver.cachedByKey(key),
      publicCache,
      limit: apiLimit,
      inwardHeaders,
      counted: (outcome) => fastPathOutcomes?.inc({ outcome }),
      countedOnLimiter: (req) => countedByFastPath.add(req),
      answered: recordAnswer,
      broken: (req, id, error) => deps.logger.warn({ reqId: id, err: error, req: { id, method: req.method, url: redactUrl(req.url ?? '') } }, 'the service answer broke off'),
    });
  }

  /**
   * What the onResponse hook above records, for an answer written in front of fastify (from
   * memory, or by the proxy fast path): the route's latency, and the request line at the level
   * its status calls for (startedAt: performance.now() when the request came).
   */
  function recordAnswer(req: IncomingMessage, route: string, status: number, id: string, startedAt: number): void {
    const ms = performance.now() - startedAt;
    deps.metrics?.observeRequest(req.method!, route, status, ms / 1000);
    const level = status >= 500 ? 'error' : status >= 400 ? 'info' : 'debug';
    if (deps.logger.isLevelEnabled(level)) {
      deps.logger[level]({ reqId: id, req: { id, method: req.method, url: redactUrl(req.url ?? '') }, status, ms }, 'request');
    }
  }

  function sendCached(reply: FastifyReply, answer: CachedAnswer): void {
    void reply.code(answer.status).headers(answer.headers).header('age', publicCache!.ageOf(answer)).send(answer.body);
  }

  /**
   * The upstream answer of a proxied request: streamed on as it comes, unless this request leads
   * its key in the public cache and the answer may be shared, then read whole, kept and sent.
   */
  function answerFromUpstream(request: FastifyRequest, reply: FastifyReply, response: UpstreamAnswer): void {
    const ticket = request.publicCacheTicket;
    if (response.statusCode === 304 || response.statusCode === 204) {
      // An answer without a body (a revalidated picture, say): nothing to stream, whatever
      // Content-Length the service said the full answer would have.
      ticket?.settle?.(null);
      response.stream.resume();
      if (response.statusCode === 204) void reply.removeHeader('content-length');
      void reply.send();
      return;
    }
    const ttlMs = ticket && publicCache ? publicCache.storableForMs(response.statusCode, response.headers) : 0;
    if (!ticket || !publicCache || ttlMs === 0) {
      if (ticket) cacheOutcomes?.inc({ outcome: 'pass' });
      ticket?.settle?.(null);
      void reply.send(response.stream);
      return;
    }
    readBody(response.stream, Number(response.headers['content-length'])).then(
      (body) => {
        cacheOutcomes?.inc({ outcome: 'miss' });
        publicCache.store(ticket, response.statusCode, response.headers, body, ttlMs, request.routeOptions.url ?? 'unmatched');
        void reply.send(body);
      },
      (error: Error) => {
        ticket.settle?.(null);
        request.log.warn({ err: error }, 'upstream answer cut off');
        if (!reply.sent) void reply.code(502).send({ code: 'internal', message: 'The service is not answering right now. Please try again shortly.' });
      },
    );
  }

  function inwardHeaders(
    request: { id: string; ip: string; protocol: string; host: string; caller: ResolvedCaller | null },
    headers: Record<string, string | string[] | undefined>) {
    // Whatever a client claims about identity is dropped; only the gateway's signed token counts.
    // A plain loop: rest destructuring with computed keys takes a slow path in V8 (it showed in
    // the gateway's CPU profile). `headers` is reply-from's own plain copy of the request headers.
    const inward: Record<string, string | string[] | undefined> = {};
    for (const name in headers) {
      if (!DROPPED_INWARD_HEADERS.has(name)) inward[name] = headers[name];
    }
    inward['x-request-id'] = request.id;
    inward['x-forwarded-for'] = request.ip;
    inward['x-forwarded-proto'] = request.protocol;
    inward['x-forwarded-host'] = request.host;
    if (request.caller) inward[IDENTITY_HEADER] = request.caller.token;
    return inward;
  }

  let subscription: Subscription | undefined;
  return {
    app,
    routes,
    async start() {
      if (deps.bus) {
        subscription = await deps.bus.subscribe({
          groupId: `gateway.${deps.instanceId ?? hostname()}`,
          topics: publicCache ? [TOPICS.sessions, TOPICS.users, TOPICS.evidence, TOPICS.media] : [TOPICS.sessions, TOPICS.users],
          fromBeginning: false,
          handler: async (message) => {
            if (publicCache && message.topic !== TOPICS.sessions) {
              const type = eventEnvelopeSchema.safeParse(message.value).data?.type;
              // Evidence announces its own changes once made. A media result and a renamed or
              // deleted user reach the archive through evidence's consumers, a moment later.
              if (message.topic === TOPICS.evidence) publicCache.clear();
              else if (message.topic === TOPICS.media || type === 'user.updated' || type === 'user.deleted') publicCache.clear({ settle: true });
            }
            if (message.topic === TOPICS.evidence || message.topic === TOPICS.media) return;
            const session = sessionEventSchema.safeParse(message.value);
            if (session.success) {
              const { userId, sessionIds } = session.data.data;
              if (sessionIds) resolver.evictSessions(sessionIds);
              else resolver.evictUser(userId);
              return;
            }
            const user = userEventSchema.safeParse(message.value);
            if (user.success && (user.data.type === 'user.deleted' || user.data.type === 'user.updated' || user.data.type === 'user.video-watched')) {
              resolver.evictUser(user.data.data.userId);
            }
          },
        });
      }
      const address = await app.listen({ host: settings.host, port: settings.port });
      return address;
    },
    async stop() {
      await subscription?.close();
      await app.close();
      await fastProxy?.close();
      await resolver.close();
      await Promise.all(Object.values(healthPools).map((pool) => pool.close()));
    },
  };
}
