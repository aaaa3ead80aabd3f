import fp from 'fastify-plugin';
import type { ResponsePolicy } from '../response-policy.js';

/** The security headers on every answer fastify writes (every route, the 404 handler included), from the response policy. */
export const securityHeaders = fp<{ policy: ResponsePolicy }>(
  async (app, { policy }) => {
    app.addHook('onRequest', (request, reply, done) => {
      // request.protocol honours X-Forwarded-Proto only when TRUST_PROXY is on.
      policy.writeSecurityHeaders(reply.raw, request.protocol === 'https');
      done();
    });
  },
  { name: 'security-headers' },
);
