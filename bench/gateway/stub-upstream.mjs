// A stand-in for the identity service that costs next to nothing per request (bench --stub):
// with it, the gateway's own cost is what the ratio shows. It answers the two requests the bench
// makes the way identity does (same status, similar headers and body size); it checks no token.
//
//   PORT=4001 node bench/gateway/stub-upstream.mjs
import { createServer } from 'node:http';
import { randomUUID } from 'node:crypto';

const now = Date.now();
const user = JSON.stringify({
  id: '01JBENCHSTUBUSER000000000000',
  username: 'benchadmin',
  email: 'benchadmin@example.org',
  role: 2,
  status: 'active',
  onboarded: false,
  avatarUrl: null,
  createdAt: new Date(now).toISOString(),
});
const resolved = JSON.stringify({
  userId: '01JBENCHSTUBUSER000000000000',
  role: 2,
  username: 'benchadmin',
  sessionId: 'stub-session',
  expiresAt: now + 14 * 24 * 3600_000,
});

const server = createServer((req, res) => {
  res.setHeader('x-request-id', req.headers['x-request-id'] ?? randomUUID());
  if (req.method === 'GET' && req.url === '/healthz') return json(res, 200, '{"status":"ok"}');
  if (req.method === 'POST' && req.url === '/internal/sessions/resolve') {
    req.resume();
    req.on('end', () => json(res, 200, resolved));
    return;
  }
  if (req.method === 'GET' && req.url === '/api/user') {
    if (!req.headers['x-portal-identity']) return json(res, 401, '{"code":"unauthenticated","message":"Please sign in."}');
    res.setHeader('cache-control', 'no-store');
    res.setHeader('etag', 'W/"bench-stub"');
    return json(res, 200, user);
  }
  return json(res, 404, '{"code":"not_found","message":"Not found."}');
});

function json(res, status, body) {
  res.statusCode = status;
  res.setHeader('content-type', 'application/json; charset=utf-8');
  res.setHeader('content-length', Buffer.byteLength(body));
  res.end(body);
}

server.keepAliveTimeout = 60_000;
server.listen(Number(process.env.PORT ?? 4001), process.env.HOST ?? '127.0.0.1');
for (const signal of ['SIGTERM', 'SIGINT']) {
  process.on(signal, () => {
    server.close(() => process.exit(0));
    server.closeIdleConnections();
    setTimeout(() => process.exit(0), 2000).unref();
  });
}
