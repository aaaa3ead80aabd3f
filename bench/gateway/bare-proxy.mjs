// The floor: fastify and @fastify/http-proxy with the gateway's pool settings and nothing else (no
// security headers, cookies, sessions, hooks or logging). Not a gateway: it forwards GET /api/user
// with a made-up identity header, which only the stand-in upstream accepts. Compare it with the
// real gateway to see how much of the gateway's cost is the proxy stack itself:
//
//   npm run bench:gateway -- --stub --compare-gateway bench/gateway/bare-proxy.mjs
import Fastify from 'fastify';
import fastifyHttpProxy from '@fastify/http-proxy';

const app = Fastify({ logger: false });
await app.register(fastifyHttpProxy, {
  upstream: process.env.IDENTITY_URL ?? 'http://127.0.0.1:4001',
  prefix: '/api/user',
  rewritePrefix: '/api/user',
  undici: { connections: 64, pipelining: 1, keepAliveTimeout: 30_000 },
  disableRequestLogging: true,
  replyOptions: {
    rewriteRequestHeaders: (_request, { cookie: _cookie, ...headers }) => ({ ...headers, 'x-portal-identity': 'bare-proxy' }),
  },
});
app.get('/readyz', async () => ({ status: 'ready' }));
await app.listen({ host: process.env.HOST ?? '127.0.0.1', port: Number(process.env.PORT ?? 8080) });
for (const signal of ['SIGTERM', 'SIGINT']) process.on(signal, () => void app.close().then(() => process.exit(0)));
