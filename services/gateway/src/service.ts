import { hostname } from 'node:os';
import Fastify, { LogController, type FastifyBaseLogger, type FastifyInstance } from 'fastify';
import proxyAddr from '@fastify/proxy-addr';
import type { Redis } from 'ioredis';
import {
  BackgroundSubscriptions,
  IdentityTokens,
  consumerChecks,
  type EventBus,
  type Logger,
  type ServedRoute,
  type ServiceMetrics,
} from '@portal/platform';
import type { GatewaySettings } from './config.js';
import { SessionResolver } from './sessions/session-resolver.js';
import { evictOnEvent, evictionTopics } from './sessions/bus-evictions.js';
import { MemoryUploadSlots, RedisUploadSlots } from './uploads/upload-slots.js';
import { answerFromMemory } from './http/answer-from-memory.js';
import type { TrustFunction } from './http/client-view.js';
import { answerUnreadableRequest, edgeServerFactory, type FrontAnswers } from './http/edge-server.js';
import type { InProcessHandler } from './http/in-process-uploads.js';
import { PublicCache } from './http/public-cache.js';
import { proxyFastPath } from './http/proxy-fast-path.js';
import { ResponsePolicy } from './http/response-policy.js';
import { health } from './http/plugins/health.js';
import { ownRoutes } from './http/plugins/own-routes.js';
import { proxy } from './http/plugins/proxy.js';
import { publicCache as publicCachePlugin, type CacheOutcome } from './http/plugins/public-cache.js';
import { ApiLimiter, rateLimit } from './http/plugins/rate-limit.js';
import { requestContext } from './http/plugins/request-context.js';
import { securityHeaders } from './http/plugins/security-headers.js';
import { sessions } from './http/plugins/sessions.js';
import { bodyGuard, uploadShare } from './http/plugins/upload-guard.js';
import { webApp } from './http/plugins/web-app.js';

export interface GatewayDeps {
  logger: Logger;
  /** Shared rate-limit counters and upload slots across gateway replicas (the distributed mode). */
  redis?: Redis;
  /** Names this instance's subscription to the bus (every gateway must see every revocation). */
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

/** TRUST_PROXY as one function, which fastify and the answers in front of it both use: a hop count as Express reads it, or proxy addresses. */
function trustFunction(trustProxy: GatewaySettings['trustProxy']): TrustFunction | false {
  if (trustProxy === false) return false;
  return typeof trustProxy === 'number' ? (_address, hop) => hop < trustProxy : proxyAddr.compile(trustProxy);
}

/**
 * The gateway's composition root: the adapters (session resolver, upload slots, public cache),
 * the response policy every answer goes through, the fastify plugins (one concern each, in the
 * order their hooks must run), the answers in front of fastify, and the bus subscription.
 */
export async function createGateway(settings: GatewaySettings, deps: GatewayDeps): Promise<Gateway> {
  const tokens = new IdentityTokens(settings.internalSecret);
  const resolver = new SessionResolver(settings.identityUrl, tokens, settings.sessionCacheTtlMs);
  const trust = trustFunction(settings.trustProxy);
  const policy = new ResponsePolicy({
    publicConfig: settings.publicConfig,
    trust,
    logger: deps.logger,
    ...(deps.metrics ? { metrics: deps.metrics } : {}),
  });
  const cache = settings.publicCacheTtlMs > 0 ? new PublicCache({ ttlMs: settings.publicCacheTtlMs }) : null;
  // One participant's running uploads: counted in Redis when the gateways share one, else here.
  const slots = deps.redis ? new RedisUploadSlots(deps.redis) : new MemoryUploadSlots();
  const limiter = new ApiLimiter();
  const upstreams = { identity: settings.identityUrl, evidence: settings.evidenceUrl };
  const cacheOutcomes = deps.metrics?.counter(
    'portal_gateway_public_cache_total',
    'Public API answers by how the gateway cache served them: hit, coalesced (waited for another request), miss (stored), pass',
    ['outcome'],
  );
  const cacheOutcome = (outcome: CacheOutcome) => cacheOutcomes?.inc({ outcome });
  const front: FrontAnswers = { fromMemory: null, fastProxy: null, closing: false };

  const app = Fastify({
    // The assertion picks fastify's logger type for the instance's generics (without it the app's
    // type is the pino logger's, which the plugins' FastifyInstance does not accept).
    loggerInstance: deps.logger as FastifyBaseLogger,
    trustProxy: trust,
    // One line per request comes from the request-context plugin, not from fastify itself.
    logController: new LogController({ disableRequestLogging: true }),
    // No child logger per request: the request id on a line comes from the request context
    // (the platform logger's mixin), as in every service, and fastify's request.log is the logger.
    childLoggerFactory: (logger) => logger,
    requestIdHeader: false,
    genReqId: policy.requestId,
    serverFactory: edgeServerFactory(front, policy.requestContext),
    bodyLimit: 64 * 1024,
    return503OnClosing: true,
    clientErrorHandler: answerUnreadableRequest,
  });
  // While closing, fastify answers 503 (return503OnClosing): so does everything that reaches it.
  app.addHook('preClose', (done) => {
    front.closing = true;
    done();
  });
  const routes: ServedRoute[] = [];
  await app.register(requestContext, { policy, routes });
  await app.register(securityHeaders, { policy });
  await app.register(bodyGuard, { limits: settings.uploads });
  await app.register(async (api) => {
    await api.register(rateLimit, { perMinute: settings.rateLimitPerMinute, limiter, ...(deps.redis ? { redis: deps.redis } : {}) });
    if (cache) await api.register(publicCachePlugin, { cache, outcome: cacheOutcome });
    await api.register(sessions, { resolver, cookieName: settings.cookieName });
    await api.register(uploadShare, { limits: settings.uploads, slots });
    await api.register(ownRoutes, { publicConfig: settings.publicConfig, openapi: deps.openapi });
    await api.register(proxy, {
      upstreams,
      policy,
      cache,
      cacheOutcome,
      ...(deps.evidenceUploadsInProcess ? { evidenceUploadsInProcess: deps.evidenceUploadsInProcess } : {}),
    });
  });
  // Every gateway must hear every event: a subscription of its own (broadcast), whose consumer
  // group the bus removes when it closes (and which commits nothing to keep).
  const groupId = `gateway.${deps.instanceId ?? hostname()}`;
  deps.metrics?.watchConsumers(deps.bus ?? { consumerStates: () => [] }, [groupId]);
  await app.register(health, {
    services: upstreams,
    ...(deps.metrics ? { metrics: deps.metrics } : {}),
    ...(deps.bus ? { checks: consumerChecks(() => deps.bus!.consumerStates(), [groupId]) } : {}),
  });
  await app.register(webApp, {
    webDist: settings.webDist,
    productName: settings.publicConfig.productName,
    productShortName: settings.productShortName,
  });

  if (cache) front.fromMemory = answerFromMemory({ cache, policy, trust, hit: () => cacheOutcome('hit') });
  let fastProxy: ReturnType<typeof proxyFastPath> | null = null;
  if (settings.proxyFastPath) {
    const fastPathOutcomes = deps.metrics?.counter(
      'portal_gateway_proxy_fast_path_total',
      'Signed-in reads the proxy fast path took, by what became of them: answered, over_limit or not_reached (both then answered by the full path)',
      ['outcome'],
    );
    fastProxy = proxyFastPath({
      upstreams,
      policy,
      trust,
      cookieName: settings.cookieName,
      cachedCaller: (key) => resolver.cachedByKey(key),
      publicCache: cache,
      limit: () => limiter.check,
      countedOnLimiter: (req) => limiter.markCounted(req),
      counted: (outcome) => fastPathOutcomes?.inc({ outcome }),
    });
    front.fastProxy = fastProxy;
  }

  const consumers = new BackgroundSubscriptions(deps.logger);
  return {
    app,
    routes,
    async start() {
      // Listens first; the subscription follows in the background, waiting for Kafka if it is away
      // (the gateway serves meanwhile; its readiness says "degraded" until it subscribed).
      const url = await app.listen({ host: settings.host, port: settings.port });
      const bus = deps.bus;
      if (bus) {
        consumers.start((signal) =>
          bus.subscribe({
            groupId,
            topics: evictionTopics(cache !== null),
            fromBeginning: false,
            broadcast: true,
            handler: evictOnEvent(resolver, cache),
            signal,
          }),
        );
      }
      return url;
    },
    async stop() {
      await consumers.close();
      await app.close();
      await fastProxy?.close();
      await resolver.close();
    },
  };
}
