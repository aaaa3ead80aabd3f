import { createServer, type Server } from 'node:http';
import { once } from 'node:events';
import type { AddressInfo } from 'node:net';

export interface HealthCheck {
  name: string;
  check: () => Promise<void>;
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
      void Promise.all(
        checks.map(async ({ name, check }) => {
          try {
            await check();
            return [name, 'ok'] as const;
          } catch (error) {
            return [name, error instanceof Error ? error.message : 'unavailable'] as const;
          }
        }),
      ).then((results) => {
        const ready = results.every(([, state]) => state === 'ok');
        res
          .writeHead(ready ? 200 : 503, { 'content-type': 'application/json' })
          .end(JSON.stringify({ status: ready ? 'ready' : 'not ready', checks: Object.fromEntries(results) }));
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
