import fp from 'fastify-plugin';
import type { CacheTicket } from '../public-cache.js';
import type { ResolvedCaller } from '../../sessions/session-resolver.js';
import type { ResponsePolicy } from '../response-policy.js';
import type { GatewayRoute } from '../../routes/route-table.js';

declare module 'fastify' {
  interface FastifyRequest {
    caller: ResolvedCaller | null;
    /** This request's part in the public cache, when it leads the upstream request for its key. */
    publicCacheTicket: CacheTicket | null;
  }
  interface FastifyContextConfig {
    /** The route's entry in the route table (routes/route-table.ts). */
    gatewayRoute?: GatewayRoute;
  }
}

export interface RequestContextOptions {
  policy: ResponsePolicy;
  /** Every route the gateway declares is added here as fastify declares it. */
  routes: { method: string; path: string }[];
}

/**
 * What every request carries and leaves behind, whoever answers it: its id on the answer
 * (x-request-id), its caller and public-cache ticket (decorations the other plugins fill in), one
 * metric and one log line when it has gone, and the portal's error shape for anything that
 * fails. The metric, the line and the shape are the response policy's (response-policy.ts), which
 * the answers written in front of fastify use too. The request's id is its platform request context's
 * (response policy: requestContext), which the edge server runs the whole request in.
 */
export const requestContext = fp<RequestContextOptions>(
  async (app, { policy, routes }) => {
    app.decorateRequest('caller', null);
    app.decorateRequest('publicCacheTicket', null);
    app.addHook('onRoute', (route) => {
      for (const method of [route.method].flat()) routes.push({ method, path: route.url });
    });

    app.setErrorHandler((error: { statusCode?: number; code?: string; message: string }, request, reply) => {
      const { status, body } = policy.errorAnswer(error);
      // A client that went away mid-request (a phone losing signal during an upload) is no fault here.
      const clientGone = request.raw.destroyed || request.raw.socket?.destroyed === true;
      if (clientGone) request.log.info({ err: error }, 'the client went away before its answer');
      else if (status >= 500) request.log.error({ err: error }, 'gateway error');
      void reply.status(status).send(body);
    });

    // Callback-style hooks where nothing is awaited: an async hook costs a promise per request.
    app.addHook('onRequest', (request, reply, done) => {
      void reply.header('x-request-id', request.id);
      done();
    });
    app.addHook('onResponse', (request, reply, done) => {
      policy.answered(
        request.method,
        request.url,
        request.routeOptions.url ?? 'unmatched',
        reply.statusCode,
        request.id,
        reply.elapsedTime,
      );
      done();
    });
  },
  { name: 'request-context' },
);
