import fp from 'fastify-plugin';
import fastifyCookie from '@fastify/cookie';
import { MESSAGES } from '@portal/contracts';
import { setRequestCaller } from '@portal/platform';
import { IdentityUnavailableError, type SessionResolver } from '../../sessions/session-resolver.js';
import { pathOf, ruleOf } from '../../routes/route-table.js';
import { isCrossSiteWrite } from '../security.js';

export interface SessionsOptions {
  resolver: SessionResolver;
  cookieName: string;
}

/**
 * Who is asking: the session cookie resolved to a caller (request.caller, whose signed token the
 * proxy passes on), after the cross-site write check (CSRF); and the sessions an answer ends here
 * at once, as the route table says (logout: the caller's own; the onboarding video watched: the
 * user's, whose token carries the flag). Other gateways hear the same through the bus.
 */
export const sessions = fp<SessionsOptions>(
  async (api, { resolver, cookieName }) => {
    await api.register(fastifyCookie);

    // Callback style: most requests carry a session the cache knows, answered without a promise.
    api.addHook('onRequest', (request, reply, done) => {
      if (isCrossSiteWrite(request.method, request.headers, request.host)) {
        void reply.status(403).send({ code: 'cross_site_request', message: MESSAGES.crossSite });
        return;
      }
      const rawId = request.cookies[cookieName];
      if (!rawId) {
        done();
        return;
      }
      const known = resolver.cached(rawId);
      if (known !== undefined) {
        request.caller = known;
        if (known) setRequestCaller(request.raw, known.identity);
        done();
        return;
      }
      resolver.resolve(rawId).then(
        (caller) => {
          request.caller = caller;
          if (caller) setRequestCaller(request.raw, caller.identity);
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

    api.addHook('onResponse', (request, reply, done) => {
      const method = request.method;
      if (method !== 'GET' && method !== 'HEAD') {
        const path = pathOf(request.url);
        const rule = ruleOf(method, path);
        if (rule.sessions === 'caller' && request.caller) resolver.evictSessions([request.caller.identity.sessionId]);
        else if (rule.sessions === 'path-user' && reply.statusCode === 200) {
          const userId = path.slice(path.lastIndexOf('/') + 1);
          resolver.evictUser(/^[\w-]+$/.test(userId) ? userId : '');
        }
      }
      done();
    });
  },
  { name: 'sessions', dependencies: ['request-context'] },
);
