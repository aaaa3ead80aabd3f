import fp from 'fastify-plugin';
import type { RouteHandlerMethod } from 'fastify';
import { MESSAGES, type PublicConfig } from '@portal/contracts';
import { GATEWAY_ROUTES } from '../../routes/route-table.js';

export interface OwnRoutesOptions {
  publicConfig: PublicConfig;
  /** The OpenAPI document served at /api/openapi.json. */
  openapi: object;
}

/**
 * The API routes the gateway answers itself: the public configuration, the OpenAPI document and
 * the JSON 404 of every other API path. Each is an entry of the route table; an entry without a
 * handler here (or the reverse) stops the gateway at start.
 */
export const ownRoutes = fp<OwnRoutesOptions>(
  async (api, { publicConfig, openapi }) => {
    const handlers: Record<string, RouteHandlerMethod> = {
      '/api/config': async (_request, reply) => {
        void reply.header('cache-control', 'public, max-age=60');
        return publicConfig;
      },
      '/api/openapi.json': async (_request, reply) => {
        void reply.header('cache-control', 'public, max-age=300');
        return openapi;
      },
      '/api/*': async (_request, reply) => reply.status(404).send({ code: 'not_found', message: MESSAGES.notFound }),
    };
    const own = GATEWAY_ROUTES.filter((route) => route.upstream === 'gateway' && route.path.startsWith('/api/'));
    for (const route of own) {
      const handler = handlers[route.path];
      if (!handler) throw new Error(`the gateway has no handler for ${route.path} (routes/route-table.ts)`);
      if (route.methods.includes('ALL')) api.all(route.path, { config: { gatewayRoute: route } }, handler);
      else api.route({ method: [...route.methods], url: route.path, config: { gatewayRoute: route }, handler });
    }
    const unused = Object.keys(handlers).filter((path) => !own.some((route) => route.path === path));
    if (unused.length > 0) throw new Error(`not in the gateway's route table: ${unused.join(', ')}`);
  },
  { name: 'own-routes' },
);
