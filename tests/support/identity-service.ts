import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { FsBlobStore, SqliteEventBus, createLogger, infrastructureFromEnv, type Logger } from '@portal/platform';
import { createIdentityService, identitySettingsFromEnv, type IdentityService } from '@portal/identity';

export interface TestIdentity {
  service: IdentityService;
  url: string;
  dataDir: string;
  bus: SqliteEventBus;
  /** The service's log lines (level debug), parsed. */
  logLines: Record<string, unknown>[];
  logger: Logger;
  dispose(): Promise<void>;
}

/**
 * The identity service alone (as in the distributed mode), on a free loopback port, with its data
 * in a fresh temporary folder: SQLite, blobs as files, the SQLite-log event bus. Its log lines are
 * kept in logLines.
 */
export async function startTestIdentity(env: Record<string, string>): Promise<TestIdentity> {
  const dataDir = mkdtempSync(join(tmpdir(), 'portal-identity-'));
  const logLines: Record<string, unknown>[] = [];
  const destination = new Writable({
    write(chunk: Buffer, _encoding, done) {
      for (const line of chunk.toString().split('\n')) if (line.trim()) logLines.push(JSON.parse(line) as Record<string, unknown>);
      done();
    },
  });
  const logger = createLogger({ service: 'identity', level: 'debug', destination });
  const bus = new SqliteEventBus({ file: join(dataDir, 'bus.sqlite'), logger: createLogger({ service: 'bus', level: 'silent' }) });
  const service = await createIdentityService(
    identitySettingsFromEnv({ DATA_DIR: dataDir, IDENTITY_HOST: '127.0.0.1', IDENTITY_PORT: '0', AUTH_RATE_LIMITS: 'false', ...env }),
    {
      bus,
      blobs: new FsBlobStore(join(dataDir, 'blobs')),
      infrastructure: { ...infrastructureFromEnv({ DATA_DIR: dataDir }), kafkaBrokers: null, redisUrl: null, mongoUrl: null, s3: null },
      logger,
    },
  );
  const url = await service.start();
  let stopped = false;
  return {
    service,
    url,
    dataDir,
    bus,
    logLines,
    logger,
    async dispose() {
      if (!stopped) {
        stopped = true;
        await service.stop();
        await bus.close();
      }
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}
