import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { once } from 'node:events';
import type { AddressInfo } from 'node:net';
import { isShuttingDown } from '../lifecycle/shutdown.js';

export interface HealthCheck {
  name: string;
  check: () => Promise<void>;
  /**
   * A check the process cannot serve without (its start-up: StartupGate): while it fails the
   * process is not ready (503, "starting"). Every other check only makes it "degraded".
   */
  gate?: boolean;
}

/** A dependency that has not answered within this is reported as such (probes time out at 1 s). */
export const READINESS_CHECK_TIMEOUT_MS = 750;

export interface ReadinessAnswer {
  ready: boolean;
  body: { status: 'ready' | 'degraded' | 'starting' | 'stopping'; checks: Record<string, string> };
}

/**
 * Readiness means "this process can serve": it is up and not shutting down. Each dependency is
 * asked at once (at most READINESS_CHECK_TIMEOUT_MS) and its state reported in the body, with the
 * status "degraded" when one does not answer; but a slow or absent Kafka, MongoDB, Redis, S3 or
 * neighbouring service does not make the process unready: it is shared by every pod, so taking
 * them all out of the load balancer would turn one slow dependency into a site that answers 503
 * for everything (the web app and the public archive included). Those requests that need the
 * missing dependency fail on their own, with their own errors; the outboxes keep events until
 * Kafka is back.
 */
export async function runReadinessChecks(checks: HealthCheck[], stopping = isShuttingDown()): Promise<ReadinessAnswer> {
  const results = await Promise.all(
    checks.map(async ({ name, check, gate }) => {
      let timer: NodeJS.Timeout | undefined;
      try {
        await Promise.race([
          check(),
          new Promise((_, reject) => {
            timer = setTimeout(() => reject(new Error(`no answer within ${READINESS_CHECK_TIMEOUT_MS} ms`)), READINESS_CHECK_TIMEOUT_MS);
          }),
        ]);
        return [name, 'ok', gate === true] as const;
      } catch (error) {
        return [name, error instanceof Error ? error.message : 'unavailable', gate === true] as const;
      } finally {
        clearTimeout(timer);
      }
    }),
  );
  const healthy = results.every(([, state]) => state === 'ok');
  const started = results.every(([, state, isGate]) => !isGate || state === 'ok');
  return {
    ready: !stopping && started,
    body: {
      status: stopping ? 'stopping' : !started ? 'starting' : healthy ? 'ready' : 'degraded',
      checks: Object.fromEntries(results.map(([name, state]) => [name, state])),
    },
  };
}

/**
 * Answers GET /healthz (the process answers) and GET /readyz (it serves; its dependencies' states
 * in the body) on a request, and anything else through `other`; true when it answered.
 */
export function answerHealth(req: IncomingMessage, res: ServerResponse, checks: HealthCheck[]): boolean {
  const path = (req.url ?? '/').split('?')[0];
  if (path === '/healthz') {
    res.writeHead(200, { 'content-type': 'application/json' }).end('{"status":"ok"}');
    return true;
  }
  if (path === '/readyz') {
    void runReadinessChecks(checks).then(({ ready, body }) => {
      res.writeHead(ready ? 200 : 503, { 'content-type': 'application/json' }).end(JSON.stringify(body));
    });
    return true;
  }
  return false;
}

/**
 * GET /healthz (the process answers) and GET /readyz (it serves; its dependencies' states in the body), for services
 * that serve no HTTP otherwise (the media worker, the notifier), so Kubernetes can probe them.
 */
export async function startHealthServer(
  port: number,
  host: string,
  checks: HealthCheck[],
  extra?: (path: string) => Promise<{ type: string; body: string } | null>,
): Promise<{ server: Server; url: string }> {
  const server = createServer((req, res) => {
    if (answerHealth(req, res, checks)) return;
    const path = (req.url ?? '/').split('?')[0];
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
  return startHealthServer(port, host, checks, async (path) =>
    path === '/metrics' ? { type: metrics.contentType(), body: await metrics.text() } : null,
  );
}
