import { Readable } from 'node:stream';
import fp from 'fastify-plugin';
import type { FastifyReply, FastifyRequest } from 'fastify';
import fastifyHttpProxy from '@fastify/http-proxy';
import fastifyReplyFrom from '@fastify/reply-from';
import { GATEWAY_ROUTES, type Upstream } from '../../routes/route-table.js';
import { inwardHeaders, withoutHopByHop } from '../hop-by-hop.js';
import { handOver, isUploadChunk, type InProcessHandler } from '../in-process-uploads.js';
import { readBody, type PublicCache } from '../public-cache.js';
import type { ResponsePolicy } from '../response-policy.js';
import type { CacheOutcome } from './public-cache.js';

/** A proxied service's answer as @fastify/reply-from hands it over. */
interface UpstreamAnswer {
  statusCode: number;
  headers: Record<string, string | string[] | undefined>;
  stream: Readable;
}

export interface ProxyOptions {
  /** The base URL of each service behind the gateway. */
  upstreams: Record<Exclude<Upstream, 'gateway'>, string>;
  policy: ResponsePolicy;
  cache: PublicCache | null;
  cacheOutcome: (outcome: CacheOutcome) => void;
  /** Evidence's resumable uploads in this same process (all-in-one): their chunks are handed over, not proxied. */
  evidenceUploadsInProcess?: InProcessHandler;
}

const UNDICI = { pipelining: 1, keepAliveTimeout: 30_000 };

/**
 * The services behind the gateway, route by route as the route table declares them: each proxied
 * prefix to its service (@fastify/http-proxy, the route table entry in each route's `config`), and
 * the routes declared one by one (a user's evidence, under identity's prefix but evidence's). The
 * service gets the gateway's signed identity header instead of the client's claims (hop-by-hop.ts);
 * its answer streams back, or is kept by the public cache when this request leads its key.
 */
export const proxy = fp<ProxyOptions>(
  async (api, options) => {
    const { upstreams, cache, cacheOutcome } = options;
    const uploadsInProcess = options.evidenceUploadsInProcess;

    /** The answer of a proxied request: streamed on as it comes, unless this request leads its key in the public cache and the answer may be shared. */
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
      const ttlMs = ticket && cache ? cache.storableForMs(response.statusCode, response.headers) : 0;
      if (!ticket || !cache || ttlMs === 0) {
        if (ticket) cacheOutcome('pass');
        ticket?.settle?.(null);
        void reply.send(response.stream);
        return;
      }
      readBody(response.stream, Number(response.headers['content-length'])).then(
        (body) => {
          cacheOutcome('miss');
          cache.store(ticket, response.statusCode, response.headers, body, ttlMs, request.routeOptions.url ?? 'unmatched');
          void reply.send(body);
        },
        (error: Error) => {
          ticket.settle?.(null);
          request.log.warn({ err: error }, 'upstream answer cut off');
          if (!reply.sent) void reply.code(502).send(options.policy.unavailable);
        },
      );
    }

    for (const route of GATEWAY_ROUTES) {
      if (route.upstream === 'gateway') continue;
      const upstream = upstreams[route.upstream];
      if (!route.proxy) {
        // One route, proxied as it is asked for.
        await api.register(async (scope) => {
          await scope.register(fastifyReplyFrom, { base: upstream, undici: { connections: 16, ...UNDICI }, disableRequestLogging: true });
          scope.route({
            method: [...route.methods],
            url: route.path,
            config: { gatewayRoute: route },
            handler: (request, reply) => {
              void reply.from(request.url, { rewriteRequestHeaders: (req, headers) => inwardHeaders(req as FastifyRequest, headers) });
            },
          });
        });
        continue;
      }
      const handsOver = uploadsInProcess && route.upstream === 'evidence';
      await api.register(fastifyHttpProxy, {
        upstream,
        prefix: route.path,
        rewritePrefix: route.path,
        httpMethods: [...route.methods],
        config: { gatewayRoute: route },
        ...(handsOver
          ? {
              handler: (request: FastifyRequest, reply: FastifyReply, dest: string, replyOptions: object) => {
                // A body the content-type parsers did not pass on as the guarded stream goes the usual way.
                if (isUploadChunk(request.method, request.url) && request.body instanceof Readable) {
                  handOver(request, reply, inwardHeaders(request, request.headers), uploadsInProcess);
                  return reply;
                }
                return reply.from(dest, replyOptions);
              },
            }
          : {}),
        undici: { connections: 64, ...UNDICI },
        // One log line per request is written by the request-context plugin.
        disableRequestLogging: true,
        replyOptions: {
          rewriteRequestHeaders: (request, headers) => inwardHeaders(request as FastifyRequest, headers),
          // The services' keep-alive and framing headers describe the loopback connection, not the client's.
          rewriteHeaders: (headers) => withoutHopByHop(headers),
          // reply-from's types name a server response; what it passes is undici's answer (status, headers, body stream).
          onResponse: (request, reply, response) =>
            answerFromUpstream(request as FastifyRequest, reply as FastifyReply, response as unknown as UpstreamAnswer),
        },
      });
    }
  },
  { name: 'proxy', dependencies: ['request-context'] },
);
