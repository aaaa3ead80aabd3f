import { createServer, type Server } from 'node:http';
import { once } from 'node:events';
import type { AddressInfo } from 'node:net';

export interface HealthCheck {
  name: string;
  check: () => Promise<void>;
}

/** Runs every check at once; ready when all answered. Each failure is named with its reason. */
export async function runReadinessChecks(checks: HealthCheck[]): Promise<{ ready: boolean; body: { status: string; checks: Record<string, string> } }> {
  const results = await Promise.all(
    checks.map(async ({ name, check }) => {
      try {
        await check();
        return [name, 'ok'] as const;
      } catch (error) {
        return [name, error instanceof Error ? error.message : 'unavailable'] as const;
      }
    }),
  );
  const ready = results.every(([, state]) => state === 'ok');
  return { ready, body: { status: ready ? 'ready' : 'not ready', checks: Object.fromEntries(results) } };
}

/**
 * GET /healthz (the process answers) and GET /readyz (every dependency answers), for services
 * that serve no HTTP otherwise (the media worker, the notifier), so Kubernetes can probe them.
 */
export async function startHealthServer(port: number, host: string, checks: HealthCheck[], extra?: (path: string) => Promise<{ type: string; body: string } | null>): Promise<{ server: Server; url: string }> {
  const server = createServer((req, res) => {
    const path = (req.url ?? '/').split('?')[0];
    if (path === '/healthz') {
      res.writeHead(200, { 'content-type': 'application/json' }).end('{"status":"ok"}');
      return;
    }
    if (path === '/readyz') {
      void runReadinessChecks(checks).then(({ ready, body }) => {
        res.writeHead(ready ? 200 : 503, { 'content-type': 'application/json' }).end(JSON.stringify(body));
      });
      return;
    }
    void (extra ? extra(path ?? '/') : Promise.resolve(null)).then(
      (answer) => {
        if (answer) res.writeHead(200, { 'content-type': answer.type }).end(answer.body);
        else res.writeHead(404, { 'content-type': 'application/json' }).end('{"code":"not_found","message":"Not found"}');
      },
      () => res.writeHead(500).end(),
    );
  });
  server.listen(port, host);
  await once(server, 'listening');
  const address = server.address() as AddressInfo;
  return { server, url: `http://${host}:${address.port}` };
}

/**
 * Health, readiness and metrics on one port, for processes that serve no HTTP of their own (the
 * media worker, the notifier) and for the gateway's metrics, which stay off its public port.
 */
export function serveHealthAndMetrics(
  port: number,
  host: string,
  checks: HealthCheck[],
  metrics: { contentType(): string; text(): Promise<string> },
): Promise<{ server: Server; url: string }> {
  return startHealthServer(port, host, checks, async (path) => (path === '/metrics' ? { type: metrics.contentType(), body: await metrics.text() } : null));
}
