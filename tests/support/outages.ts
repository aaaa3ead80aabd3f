import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pino } from 'pino';
import { KafkaEventBus, runDeadLetterCommand, type DeadLetter } from '@portal/platform';
import { waitFor } from '@portal/platform/testing';
import { startDistributedPortal, type DistributedPortal, type ServiceName } from './distributed-portal.js';
import { startPrivateServers, type PrivateServers, type ServerName } from './private-servers.js';
import { TEST_ADMIN } from './portal.js';

/**
 * The outage suites (tests/distributed/outage-*.test.ts): the five services as processes on a set of
 * real servers of their own, one of which is stopped (servers.sh down) for longer than any retry
 * budget the portal had before, then started again on its data (servers.sh up). What each outage
 * cost (its length, the time until the work it held was done, what was tried again) is printed as
 * one line per outage, "outage figures: {...}", for the closing note.
 */
export interface OutageRig {
  servers: PrivateServers;
  portal: DistributedPortal;
  /** A client of the portal's Kafka namespace, as a service has one (lag, events). */
  bus: KafkaEventBus;
  close(): Promise<void>;
}

export async function startOutageRig(env: Record<string, string> = {}): Promise<OutageRig> {
  // Redis keeps its data across the restart (an append-only file), as docs/OPERATIONS.md asks of a production Redis.
  const servers = await startPrivateServers(['kafka', 'mongo', 'redis', 's3', 'smtp'], { REDIS_APPENDONLY: 'yes' });
  const scratch = mkdtempSync(join(tmpdir(), 'portal-outage-'));
  let portal: DistributedPortal;
  try {
    portal = await startDistributedPortal({
      ...servers.env,
      RATE_LIMIT_PER_MINUTE: '0',
      AUTH_RATE_LIMITS: 'false',
      ADMIN_USERNAME: TEST_ADMIN.username,
      ADMIN_EMAIL: TEST_ADMIN.email,
      ADMIN_PASSWORD: TEST_ADMIN.password,
      // The lines the figures are read from (holds, ffmpeg runs, postponements).
      LOG_LEVEL: 'info',
      // The API alone: these suites run beside npm test, which builds the web app meanwhile.
      WEB_DIST: join(scratch, 'no-web-app'),
      // Media mechanics, not faces (as the other tests of transcodes and crashes: tests/support/portal.ts).
      FACE_BLUR: 'off',
      ...env,
    });
  } catch (error) {
    await servers.stop();
    throw error;
  }
  const bus = new KafkaEventBus({
    brokers: servers.env.KAFKA_BROKERS!.split(','),
    clientId: 'outage-test',
    logger: pino({ level: 'silent' }),
    namespace: portal.namespace,
  });
  return {
    servers,
    portal,
    bus,
    async close() {
      await bus.close().catch(() => undefined);
      await portal.dispose();
      await servers.stop();
      rmSync(scratch, { recursive: true, force: true });
    },
  };
}

export async function readiness(url: string): Promise<{ status: number; body: { status: string; checks: Record<string, string> } }> {
  const response = await fetch(`${url}/readyz`, { signal: AbortSignal.timeout(3_000) });
  return { status: response.status, body: (await response.json()) as { status: string; checks: Record<string, string> } };
}

/** Waits until a service's readiness check says what the test expects (a consumer paused for a dependency, say). */
export async function waitForCheck(portal: DistributedPortal, service: ServiceName, check: string, state: RegExp, timeoutMs = 120_000) {
  let last: unknown = null;
  try {
    return await waitFor(
      async () => {
        const answer = await readiness(portal.serviceUrl(service)).catch(() => null);
        last = answer?.body ?? last;
        const value = answer?.body.checks[check];
        return value !== undefined && state.test(value) ? answer : null;
      },
      { timeoutMs, intervalMs: 500, what: `${service}'s readiness check "${check}" to match ${state}` },
    );
  } catch (error) {
    const lines = portal.logs(service).split('\n').slice(-15).join('\n');
    throw new Error(`${(error as Error).message}\nlast readiness: ${JSON.stringify(last)}\nlast log lines:\n${lines}`, { cause: error });
  }
}

const METRICS_URL: Partial<Record<ServiceName, ServiceName | 'gateway-metrics'>> = { gateway: 'gateway-metrics' };

/** The sum of a metric's series whose labels include these, from one service's /metrics. */
export async function metric(
  portal: DistributedPortal,
  service: ServiceName,
  name: string,
  labels: Record<string, string> = {},
): Promise<number> {
  const text = await (await fetch(`${portal.serviceUrl(METRICS_URL[service] ?? service)}/metrics`)).text();
  let sum = 0;
  for (const line of text.split('\n')) {
    const match = new RegExp(`^${name}(\\{[^}]*\\})? ([0-9.e+-]+)$`).exec(line);
    if (!match) continue;
    const series = match[1] ?? '';
    if (Object.entries(labels).every(([label, value]) => series.includes(`${label}="${value}"`))) sum += Number(match[2]);
  }
  return sum;
}

/** Dead letters written by every consumer of the portal (its metrics), and those the dead-letter command finds on Kafka. */
export async function deadLetters(rig: OutageRig): Promise<{ counted: number; listed: DeadLetter[] }> {
  let counted = 0;
  for (const service of ['identity', 'evidence', 'notifier', 'gateway'] as const) {
    counted += await metric(rig.portal, service, 'portal_event_dead_letters_total');
  }
  const lines: string[] = [];
  const code = await runDeadLetterCommand(
    ['list', '--json'],
    { KAFKA_BROKERS: rig.servers.env.KAFKA_BROKERS, DEPLOYMENT_NAMESPACE: rig.portal.namespace },
    (line) => lines.push(line),
  );
  if (code !== 0) throw new Error(`dead-letters list failed: ${lines.join('\n')}`);
  return { counted, listed: lines.map((line) => JSON.parse(line) as DeadLetter) };
}

/** Resolves at `start + ms` (an outage's planned end). */
export function until(start: number, ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, Math.max(0, start + ms - Date.now())));
}

/**
 * One outage: the server stopped (its data kept), `during` run meanwhile (it gets the time the
 * server went), the server started again `awayMs` after it went, or at once when `during` fails,
 * so that a failure never leaves the next test without it. Answers when it went and came back.
 */
export async function outage(
  rig: OutageRig,
  server: ServerName,
  awayMs: number,
  during: (down: number) => Promise<void>,
): Promise<{ down: number; back: number }> {
  const down = Date.now();
  await rig.servers.down(server);
  try {
    await during(down);
    await until(down, awayMs);
  } finally {
    await rig.servers.up(server);
  }
  return { down, back: Date.now() };
}

/** Runs `work` with a service frozen (SIGSTOP: a stalled pod), thawed afterwards whatever happens. */
export async function whilePaused<T>(portal: DistributedPortal, service: ServiceName, work: () => Promise<T>): Promise<T> {
  portal.pause(service);
  try {
    return await work();
  } finally {
    portal.resume(service);
  }
}

export interface OutageFigures {
  server: ServerName;
  /** How long the server was away (down to answering again), in seconds. */
  awaySeconds: number;
  /** From the server answering again to the held work all done, in seconds. */
  recoverySeconds: number;
  /** What was tried again meanwhile (counts from the services' metrics). */
  retried: Record<string, number>;
  [more: string]: unknown;
}

/** Prints an outage's figures as one line (CI's log keeps them for the closing note). */
export function printFigures(figures: OutageFigures): void {
  console.log(`outage figures: ${JSON.stringify(figures)}`);
}

/** Lines of a service's log that hold a message, as logged (JSON lines). */
export function logLines(portal: DistributedPortal, service: ServiceName, message: string): Record<string, unknown>[] {
  return portal
    .logs(service)
    .split('\n')
    .filter((line) => line.includes(`"msg":"${message}`))
    .map((line) => JSON.parse(line) as Record<string, unknown>);
}
