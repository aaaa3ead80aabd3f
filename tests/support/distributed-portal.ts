import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { once } from 'node:events';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { inject } from 'vitest';
import { createKafkaTopics, kafkaConnectionFromEnv } from '@portal/platform';
import { waitFor } from '@portal/platform/testing';
import { markStopping } from './distributed-exits.js';
import { freePort } from './free-port.js';

export type ServiceName = 'identity' | 'evidence' | 'media-worker' | 'notifier' | 'gateway';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const MAIN: Record<ServiceName, string> = {
  identity: 'services/identity/dist/main.js',
  evidence: 'services/evidence/dist/main.js',
  'media-worker': 'services/media-worker/dist/main.js',
  notifier: 'services/notifier/dist/main.js',
  gateway: 'services/gateway/dist/main.js',
};

/** How one service process is started: the work tree's dist/main.js, or a container image. */
export interface ServiceLauncher {
  /** Throws when the services cannot be started (e.g. not built). */
  check(): void;
  /** The command that runs one service with this environment. */
  command(
    service: ServiceName,
    env: Record<string, string>,
  ): Promise<{ file: string; args: string[]; env: Record<string, string>; cwd?: string; detached?: boolean }>;
  /** Delivers a signal to the service's process (default: to the spawned process). */
  signal?(child: ChildProcess, signal: NodeJS.Signals): void;
  /** Frees what the launcher made (containers), after every process has stopped. */
  dispose?(): Promise<void>;
  /**
   * Creates the namespace's Kafka topics the way a deployment does (the kafka-topics Job's
   * command, from its image), with this environment; without it the set-up creates them itself.
   */
  createTopics?(env: Record<string, string>): Promise<void>;
}

/** The built services of the work tree, each as a Node process (the default). */
export const workTreeLauncher: ServiceLauncher = {
  check() {
    for (const main of Object.values(MAIN)) {
      if (!existsSync(join(ROOT, main))) throw new Error(`${main} is missing: run npm run build first`);
    }
  },
  async command(service, env) {
    return { file: process.execPath, args: [join(ROOT, MAIN[service])], env, cwd: ROOT };
  },
};

export interface DistributedPortal {
  url: string;
  /** Scratch folder of the processes (there is no embedded store in this mode). */
  dataDir: string;
  /** The deployment namespace: Kafka topics and groups, Redis keys, MongoDB databases, S3 prefix. */
  namespace: string;
  /** SIGKILL one service: a crash, not a shutdown. */
  kill(service: ServiceName): Promise<void>;
  /**
   * Starts a killed or stopped service again and waits until it is ready, or (`until: 'live'`) only
   * until it answers /healthz (a start while a dependency it needs is away: live, not ready).
   */
  start(service: ServiceName, options?: { until?: 'ready' | 'live' }): Promise<void>;
  /** Freezes a service (SIGSTOP: a pod stalled, its consumers falling behind) and thaws it (SIGCONT). */
  pause(service: ServiceName): void;
  resume(service: ServiceName): void;
  logs(service: ServiceName): string;
  /** Where a service's own HTTP port answers (health, metrics); the gateway's metrics port for 'gateway-metrics'. */
  serviceUrl(service: ServiceName | 'gateway-metrics'): string;
  stop(): Promise<void>;
  dispose(): Promise<void>;
}

/** TLS/SASL of the brokers when a test gives them (KAFKA_SSL*, KAFKA_SASL_* in its env). */
function kafkaClientOf(env: Record<string, string>) {
  return kafkaConnectionFromEnv({ ...process.env, ...env });
}

/**
 * The portal in its distributed mode: the five services as separate Node processes (their built
 * dist/main.js), on the Kafka, MongoDB, Redis, S3 and SMTP servers named in the environment
 * (infra/local/servers.sh writes them). Each call gets its own namespace, so runs do not meet.
 */
export async function startDistributedPortal(
  env: Record<string, string> = {},
  launcher: ServiceLauncher = workTreeLauncher,
): Promise<DistributedPortal> {
  for (const name of ['KAFKA_BROKERS', 'MONGO_URL', 'REDIS_URL', 'S3_BUCKET', 'SMTP_URL']) {
    if (!env[name] && !process.env[name])
      throw new Error(`${name} is not set: start the servers (infra/local/servers.sh start) and load infra/local/.env.servers`);
  }
  launcher.check();
  const namespace = `t${randomBytes(4).toString('hex')}`;
  // The services never create topics: a deployment's kafka-topics Job does, here this set-up (or
  // the launcher, with the Job's own command from its image).
  if (launcher.createTopics) {
    const kafkaEnv = Object.fromEntries(Object.entries({ ...process.env, ...env }).filter(([name]) => name.startsWith('KAFKA_')));
    await launcher.createTopics({
      ...(kafkaEnv as Record<string, string>),
      DEPLOYMENT_NAMESPACE: namespace,
      KAFKA_TOPIC_PARTITIONS: '3',
      KAFKA_REPLICATION_FACTOR: '1',
      KAFKA_TOPIC_RETENTION_MS: '3600000',
      DEAD_LETTER_RETENTION_MS: '3600000',
    });
  } else {
    await createKafkaTopics({
      brokers: (env.KAFKA_BROKERS ?? process.env.KAFKA_BROKERS!).split(','),
      namespace,
      partitions: 3,
      replicationFactor: 1,
      retentionMs: 3_600_000,
      deadLetterRetentionMs: 3_600_000,
      ...kafkaClientOf(env),
    });
  }
  const dataDir = mkdtempSync(join(tmpdir(), 'portal-distributed-'));
  const ports = {
    identity: await freePort(),
    evidence: await freePort(),
    'media-worker': await freePort(),
    notifier: await freePort(),
    gateway: await freePort(),
    'gateway-metrics': await freePort(),
  };
  const shared: Record<string, string> = {
    PATH: process.env.PATH ?? '',
    HOME: process.env.HOME ?? '',
    KAFKA_BROKERS: process.env.KAFKA_BROKERS!,
    MONGO_URL: process.env.MONGO_URL!,
    REDIS_URL: process.env.REDIS_URL!,
    S3_ENDPOINT: process.env.S3_ENDPOINT ?? '',
    S3_BUCKET: process.env.S3_BUCKET!,
    S3_REGION: process.env.S3_REGION ?? 'us-east-1',
    S3_ACCESS_KEY_ID: process.env.S3_ACCESS_KEY_ID ?? '',
    S3_SECRET_ACCESS_KEY: process.env.S3_SECRET_ACCESS_KEY ?? '',
    S3_FORCE_PATH_STYLE: 'true',
    SMTP_URL: process.env.SMTP_URL!,
    DEPLOYMENT_NAMESPACE: namespace,
    INTERNAL_SECRET: randomBytes(32).toString('base64url'),
    LOG_LEVEL: process.env.PORTAL_TEST_LOGS ? 'debug' : 'warn',
    PRODUCT_NAME: 'Operation Test',
    PUBLIC_URL: `http://127.0.0.1:${ports.gateway}`,
    ...env,
  };
  const perService: Record<ServiceName, Record<string, string>> = {
    identity: { IDENTITY_HOST: '127.0.0.1', IDENTITY_PORT: String(ports.identity), EVIDENCE_URL: `http://127.0.0.1:${ports.evidence}` },
    evidence: { EVIDENCE_HOST: '127.0.0.1', EVIDENCE_PORT: String(ports.evidence) },
    'media-worker': { HEALTH_HOST: '127.0.0.1', HEALTH_PORT: String(ports['media-worker']) },
    notifier: { HEALTH_HOST: '127.0.0.1', HEALTH_PORT: String(ports.notifier), IDENTITY_URL: `http://127.0.0.1:${ports.identity}` },
    gateway: {
      HOST: '127.0.0.1',
      PORT: String(ports.gateway),
      IDENTITY_URL: `http://127.0.0.1:${ports.identity}`,
      EVIDENCE_URL: `http://127.0.0.1:${ports.evidence}`,
      // A test may serve its own copy of the build (e.g. to make a new release of the service worker).
      WEB_DIST: env.WEB_DIST ?? join(ROOT, 'web/dist'),
      METRICS_HOST: '127.0.0.1',
      METRICS_PORT: String(ports['gateway-metrics']),
    },
  };
  const children = new Map<ServiceName, ChildProcess>();
  const output = new Map<ServiceName, string>();

  const start = async (service: ServiceName, { until = 'ready' }: { until?: 'ready' | 'live' } = {}) => {
    const command = await launcher.command(service, {
      ...shared,
      ...perService[service],
      DATA_DIR: join(dataDir, service),
      INSTANCE_ID: `${service}-${Date.now()}`,
    });
    const child = spawn(command.file, command.args, {
      cwd: command.cwd,
      env: command.env,
      detached: command.detached ?? false,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const append = (chunk: Buffer) => output.set(service, ((output.get(service) ?? '') + chunk.toString()).slice(-200_000));
    child.stdout.on('data', append);
    child.stderr.on('data', append);
    children.set(service, child);
    await waitFor(
      async () => {
        if (child.exitCode !== null) throw new Error(`${service} exited (${child.exitCode}): ${output.get(service)?.slice(-3000)}`);
        const response = await fetch(`http://127.0.0.1:${ports[service]}/${until === 'live' ? 'healthz' : 'readyz'}`).catch(() => null);
        return response?.status === 200;
      },
      { timeoutMs: 60_000, intervalMs: 200, what: `${service} to be ${until}` },
    ).catch((error: Error) => {
      throw new Error(`${error.message}\n--- ${service} output ---\n${output.get(service)?.slice(-3000) ?? ''}`);
    });
  };

  const signal = (child: ChildProcess, name: NodeJS.Signals) => (launcher.signal ? launcher.signal(child, name) : child.kill(name));

  const isRunning = (child: ChildProcess) => child.exitCode === null && child.signalCode === null;

  const kill = async (service: ServiceName) => {
    const child = children.get(service);
    if (!child || !isRunning(child)) return;
    const exited = once(child, 'exit');
    signal(child, 'SIGKILL');
    await exited;
  };

  /** SIGTERM to every running process; each one's exit, by service. */
  const terminate = () =>
    [...children.entries()]
      .filter(([, child]) => isRunning(child))
      .map(([service, child]) => {
        const exited = once(child, 'exit');
        signal(child, 'SIGTERM');
        return { service, child, exited };
      });

  const stop = async () => {
    await Promise.all(
      terminate().map(async ({ child, exited }) => {
        const timer = setTimeout(() => signal(child, 'SIGKILL'), 15_000);
        await exited;
        clearTimeout(timer);
      }),
    );
  };

  // All five at once, as a deployment starts its pods: no service waits for another to be ready
  // (each one's readiness is its own; a neighbour that is not up yet is retried when called).
  const started = await Promise.allSettled((Object.keys(MAIN) as ServiceName[]).map((service) => start(service)));
  const failed = started.find((result): result is PromiseRejectedResult => result.status === 'rejected');
  if (failed) {
    await stop();
    await launcher.dispose?.();
    throw failed.reason;
  }

  return {
    url: `http://127.0.0.1:${ports.gateway}`,
    dataDir,
    namespace,
    kill,
    start,
    pause: (service) => {
      const child = children.get(service);
      if (child && isRunning(child)) signal(child, 'SIGSTOP');
    },
    resume: (service) => {
      const child = children.get(service);
      if (child && isRunning(child)) signal(child, 'SIGCONT');
    },
    logs: (service) => output.get(service) ?? '',
    serviceUrl: (service) => `http://127.0.0.1:${ports[service]}`,
    stop,
    async dispose() {
      const stopping = inject('stoppingProcessesDir');
      if (!stopping || launcher.dispose) {
        await stop();
        await launcher.dispose?.();
        rmSync(dataDir, { recursive: true, force: true });
        return;
      }
      // Told to stop, not waited for: the next file's portal starts meanwhile, and the run's
      // teardown waits for these to be gone (tests/support/distributed-exits.ts).
      const exits = terminate().map(({ service, child }) => markStopping(stopping, service, child));
      void Promise.all(exits).then(() => rmSync(dataDir, { recursive: true, force: true }));
    },
  };
}
