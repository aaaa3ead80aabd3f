import fp from 'fastify-plugin';
import type { FastifyReply } from 'fastify';
import { PublicCache, type CachedAnswer } from '../public-cache.js';
import { pathOf, ruleOf } from '../../routes/route-table.js';

export type CacheOutcome = 'hit' | 'coalesced' | 'miss' | 'pass';

export interface PublicCacheOptions {
  cache: PublicCache;
  /** Counts how each public answer was served (portal_gateway_public_cache_total). */
  outcome: (outcome: CacheOutcome) => void;
}

/**
 * The gateway's memory of public API answers (public-cache.ts) on the fastify path: before the
 * session is resolved (a public answer is the same for every caller) a request is answered from
 * memory, waits for the one request that went upstream for its key, or leads; the proxy stores
 * what the leader brings back (plugins/proxy.ts). A write empties the cache before its answer
 * leaves, as the route table says (`cache`: clear, settle or keep), so whoever made the change
 * sees it in their very next request.
 */
export const publicCache = fp<PublicCacheOptions>(
  async (api, { cache, outcome }) => {
    const sendCached = (reply: FastifyReply, answer: CachedAnswer) => {
      void reply.code(answer.status).headers(answer.headers).header('age', cache.ageOf(answer)).send(answer.body);
    };
    api.addHook('onRequest', (request, reply, done) => {
      const found = cache.lookup(request);
      switch (found.kind) {
        case 'hit':
          outcome('hit');
          sendCached(reply, found.answer);
          return;
        case 'wait':
          void PublicCache.wait(found.answer).then((answer) => {
            if (answer && !reply.sent) {
              outcome('coalesced');
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
    api.addHook('onSend', (request, _reply, payload, done) => {
      const method = request.method;
      if (method !== 'GET' && method !== 'HEAD') {
        const eviction = ruleOf(method, pathOf(request.url)).cache;
        if (eviction !== 'keep') cache.clear({ settle: eviction === 'settle' });
      }
      done(null, payload);
    });
  },
  { name: 'public-cache', dependencies: ['request-context'] },
);
