import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { z } from 'zod';
import { buildOpenApiDocument } from '@portal/contracts/openapi';
import { FsBlobStore, SqliteEventBus, createLogger, envPort, parseEnv, type Logger } from '@portal/platform';
import { createIdentityService, identitySettingsFromEnv } from '@portal/identity';
import { createGateway, gatewaySettingsFromEnv } from '@portal/gateway';

export interface RunningPortal {
  /** The gateway's base URL. */
  url: string;
  dataDir: string;
  stop(): Promise<void>;
}

const allInOneEnvSchema = z.object({
  DATA_DIR: z.string().default('./data'),
  /** Loopback ports of the inner services; 0 picks free ones. */
  IDENTITY_PORT: envPort.default(0),
});

const DEFAULT_WEB_DIST = fileURLToPath(new URL('../../../web/dist', import.meta.url));

/**
 * Every service in this one process, each on its own loopback port, the gateway in front, on the
 * embedded stores under DATA_DIR: SQLite files, blobs as files, the SQLite-log event bus.
 */
export async function startAllInOne(
  env: NodeJS.ProcessEnv = process.env,
  loggerFor: (service: string) => Logger = (service) => createLogger({ service }),
): Promise<RunningPortal> {
  const base = parseEnv(allInOneEnvSchema, env);
  const log = loggerFor('portal');
  // One process: the services share a secret made fresh at every start unless ops set one.
  const internalSecret = env.INTERNAL_SECRET ?? randomBytes(32).toString('base64url');
  const shared = { ...env, DATA_DIR: base.DATA_DIR, INTERNAL_SECRET: internalSecret };

  const bus = new SqliteEventBus({ file: join(base.DATA_DIR, 'bus.sqlite'), logger: loggerFor('bus') });
  const blobs = new FsBlobStore(join(base.DATA_DIR, 'blobs'));
  const stops: (() => Promise<void>)[] = [() => bus.close()];
  const stop = async () => {
    for (const step of stops.splice(0).reverse()) {
      await step().catch((error: unknown) => log.error({ err: error }, 'stop step failed'));
    }
  };

  try {
    const identity = createIdentityService(
      { ...identitySettingsFromEnv({ ...shared, IDENTITY_HOST: '127.0.0.1', IDENTITY_PORT: String(base.IDENTITY_PORT) }) },
      { bus, blobs, logger: loggerFor('identity') },
    );
    const identityUrl = await identity.start();
    stops.push(() => identity.stop());

    const gatewaySettings = gatewaySettingsFromEnv({ WEB_DIST: DEFAULT_WEB_DIST, ...shared, IDENTITY_URL: identityUrl });
    const gateway = await createGateway(gatewaySettings, {
      logger: loggerFor('gateway'),
      bus,
      openapi: buildOpenApiDocument(),
    });
    const url = await gateway.start();
    stops.push(() => gateway.stop());
    log.info({ url, dataDir: base.DATA_DIR }, 'portal ready (all-in-one)');
    return { url, dataDir: base.DATA_DIR, stop };
  } catch (error) {
    await stop();
    throw error;
  }
}
