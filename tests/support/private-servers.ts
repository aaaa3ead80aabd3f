import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { freePort } from './free-port.js';

const SERVERS_SCRIPT = fileURLToPath(new URL('../../infra/local/servers.sh', import.meta.url));
const run = promisify(execFile);

export type ServerName = 'kafka' | 'mongo' | 'redis' | 's3' | 'smtp';

export interface PrivateServers {
  /** The addresses (and Kafka credentials) servers.sh wrote, as environment variables. */
  env: Record<string, string>;
  /** The pid of one server's process, from servers.sh's pid file. */
  pid(server: ServerName): number;
  /** Stops one server (servers.sh down: SIGTERM), keeping its data: an outage. */
  down(server: ServerName): Promise<void>;
  /** Starts it again on its data (servers.sh up) and waits until it answers. */
  up(server: ServerName): Promise<void>;
  stop(): Promise<void>;
}

/**
 * A set of infrastructure servers of a test's own (infra/local/servers.sh with its own ports,
 * data directory, state and env file), for tests that stop, pause or reconfigure a server: the
 * shared set that other test runs use is never touched.
 */
export async function startPrivateServers(servers: ServerName[], settings: Record<string, string> = {}): Promise<PrivateServers> {
  const dataDir = mkdtempSync(join(tmpdir(), 'portal-private-servers-'));
  const ports: Record<string, string> = {};
  const portVariables: Record<ServerName, string[]> = {
    kafka: ['KAFKA_PORT', 'KAFKA_CONTROLLER_PORT'],
    mongo: ['MONGO_PORT'],
    redis: ['REDIS_PORT'],
    s3: ['S3_PORT'],
    smtp: ['SMTP_PORT', 'MAIL_API_PORT'],
  };
  for (const server of servers) for (const variable of portVariables[server]) ports[variable] = String(await freePort());
  const scriptEnv = {
    ...process.env,
    PORTAL_INFRA_DATA: dataDir,
    PORTAL_INFRA_STATE_FILE: join(dataDir, 'state'),
    PORTAL_INFRA_ENV_FILE: join(dataDir, 'env.servers'),
    ...ports,
    ...settings,
  };
  const stop = async () => {
    await run('bash', [SERVERS_SCRIPT, 'stop'], { env: scriptEnv, timeout: 60_000 }).catch(() => undefined);
    rmSync(dataDir, { recursive: true, force: true });
  };
  try {
    await run('bash', [SERVERS_SCRIPT, 'start', ...servers], { env: scriptEnv, timeout: 240_000 });
  } catch (error) {
    await stop();
    throw error;
  }
  const env: Record<string, string> = {};
  for (const line of readFileSync(join(dataDir, 'env.servers'), 'utf8').split('\n')) {
    const match = /^([A-Z0-9_]+)=(.*)$/.exec(line);
    if (match) env[match[1]!] = match[2]!;
  }
  const script = (command: string, server: ServerName) =>
    run('bash', [SERVERS_SCRIPT, command, server], { env: scriptEnv, timeout: 240_000 }).then(() => undefined);
  return {
    env,
    pid: (server) => Number(readFileSync(join(dataDir, 'pids', `${server}.pid`), 'utf8').trim()),
    down: (server) => script('down', server),
    up: (server) => script('up', server),
    stop,
  };
}
