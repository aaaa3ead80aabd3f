import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { z } from 'zod';
import { buildOpenApiDocument } from '@portal/contracts/openapi';
import { MEDIA_RESULTS_QUEUE, mediaQueueList, openMediaQueues, type MediaJob } from '@portal/contracts';
import {
  FsBlobStore,
  SqliteEventBus,
  SqliteJobQueue,
  createLogger,
  envBoolean,
  envPort,
  expressRoutes,
  infrastructureFromEnv,
  keepDataDirPrivate,
  loadOrCreateInternalSecret,
  parseEnv,
  type Logger,
  type QueuedEvent,
  type ServedRoute,
} from '@portal/platform';
import { createIdentityService, identitySettingsFromEnv } from '@portal/identity';
import { createEvidenceService, evidenceSettingsFromEnv, jobsDatabaseFile } from '@portal/evidence';
import { createMediaWorker, mediaWorkerSettingsFromEnv } from '@portal/media-worker';
import { MAIL_KEEP_SENT_MS, createNotifier, notifierSettingsFromEnv, type AppointmentJob, type MailJob } from '@portal/notifier';
import { createGateway, gatewaySettingsFromEnv } from '@portal/gateway';

export interface RunningPortal {
  /** The gateway's base URL. */
  url: string;
  dataDir: string;
  stop(): Promise<void>;
  /** The routes each HTTP service declares (all-in-one only): for checks against route tables. */
  routes?: () => { gateway: ServedRoute[]; identity: ServedRoute[]; evidence: ServedRoute[] };
}

const allInOneEnvSchema = z.object({
  DATA_DIR: z.string().default('./data'),
  /** Loopback ports of the inner services; 0 picks free ones. */
  IDENTITY_PORT: envPort.default(0),
  EVIDENCE_PORT: envPort.default(0),
  /** Run the media worker in this process (turn off to run it elsewhere). */
  MEDIA_WORKER_ENABLED: envBoolean.default(true),
  /**
   * Hand the chunks of resumable uploads from the gateway to evidence inside the process (turn off
   * to send them over loopback HTTP like every other request, as the distributed mode does).
   */
  UPLOADS_IN_PROCESS: envBoolean.default(true),
});

const DEFAULT_WEB_DIST = fileURLToPath(new URL('../../../web/dist', import.meta.url));

/**
 * Every service in this one process, each on its own loopback port, the gateway in front, on the
 * embedded stores under DATA_DIR: SQLite files, blobs as files, the SQLite-log event bus.
 */
export interface AllInOneOptions {
  /** The time in ms, for tests that make codes expire without waiting. */
  clock?: () => number;
}

export async function startAllInOne(
  env: NodeJS.ProcessEnv = process.env,
  loggerFor: (service: string) => Logger = (service) => createLogger({ service }),
  options: AllInOneOptions = {},
): Promise<RunningPortal> {
  const base = parseEnv(allInOneEnvSchema, env);
  const log = loggerFor('portal');
  keepDataDirPrivate(base.DATA_DIR);
  const internalSecret = loadOrCreateInternalSecret(base.DATA_DIR, env);
  const shared = { ...env, DATA_DIR: base.DATA_DIR, INTERNAL_SECRET: internalSecret };

  // All-in-one means the embedded adapters, whatever addresses the environment may hold.
  const infrastructure = {
    ...infrastructureFromEnv({
      DATA_DIR: base.DATA_DIR,
      ...(env.BUS_PRUNE_AFTER_MS ? { BUS_PRUNE_AFTER_MS: env.BUS_PRUNE_AFTER_MS } : {}),
      ...(env.DEAD_LETTER_RETENTION_MS ? { DEAD_LETTER_RETENTION_MS: env.DEAD_LETTER_RETENTION_MS } : {}),
    }),
    kafkaBrokers: null,
    redisUrl: null,
    mongoUrl: null,
    s3: null,
  };
  const bus = new SqliteEventBus({
    file: join(base.DATA_DIR, 'bus.sqlite'),
    logger: loggerFor('bus'),
    pruneAfterMs: infrastructure.busPruneAfterMs,
    deadLetterRetentionMs: infrastructure.deadLetterRetentionMs,
  });
  const blobs = new FsBlobStore(join(base.DATA_DIR, 'blobs'));
  const mediaQueues = openMediaQueues(
    (queue) => new SqliteJobQueue<MediaJob>({ file: jobsDatabaseFile(base.DATA_DIR), queue, logger: loggerFor('jobs') }),
  );
  const mediaResults = new SqliteJobQueue<QueuedEvent>({
    file: jobsDatabaseFile(base.DATA_DIR),
    queue: MEDIA_RESULTS_QUEUE,
    logger: loggerFor('jobs'),
  });
  const mail = new SqliteJobQueue<MailJob>({
    file: jobsDatabaseFile(base.DATA_DIR),
    queue: 'mail',
    logger: loggerFor('jobs'),
    keepCompletedMs: MAIL_KEEP_SENT_MS,
  });
  const appointmentMessages = new SqliteJobQueue<AppointmentJob>({
    file: jobsDatabaseFile(base.DATA_DIR),
    queue: 'appointment-messages',
    logger: loggerFor('jobs'),
    keepCompletedMs: MAIL_KEEP_SENT_MS,
  });
  const stops: (() => Promise<void>)[] = [
    () => bus.close(),
    ...[...mediaQueueList(mediaQueues), mediaResults].map((queue) => () => queue.close()),
    () => mail.close(),
    () => appointmentMessages.close(),
  ];
  const stop = async () => {
    for (const step of stops.splice(0).reverse()) {
      await step().catch((error: unknown) => log.error({ err: error }, 'stop step failed'));
    }
  };

  try {
    // Evidence first: identity's participant export asks it for their items.
    const evidence = await createEvidenceService(
      evidenceSettingsFromEnv({ ...shared, EVIDENCE_HOST: '127.0.0.1', EVIDENCE_PORT: String(base.EVIDENCE_PORT) }),
      { bus, mediaQueues, blobs, infrastructure, logger: loggerFor('evidence') },
    );
    const evidenceUrl = await evidence.start();
    stops.push(() => evidence.stop());

    const identity = await createIdentityService(
      {
        ...identitySettingsFromEnv({
          ...shared,
          IDENTITY_HOST: '127.0.0.1',
          IDENTITY_PORT: String(base.IDENTITY_PORT),
          EVIDENCE_URL: evidenceUrl,
        }),
      },
      { bus, blobs, infrastructure, logger: loggerFor('identity'), ...(options.clock ? { clock: options.clock } : {}) },
    );
    const identityUrl = await identity.start();
    stops.push(() => identity.stop());

    if (base.MEDIA_WORKER_ENABLED) {
      const worker = createMediaWorker(mediaWorkerSettingsFromEnv(shared), {
        bus,
        mediaQueues,
        results: mediaResults,
        blobs,
        logger: loggerFor('media-worker'),
      });
      await worker.start();
      stops.push(() => worker.stop());
    }

    const notifier = createNotifier(notifierSettingsFromEnv({ ...shared, IDENTITY_URL: identityUrl }), {
      bus,
      mail,
      appointments: appointmentMessages,
      logger: loggerFor('notifier'),
      ...(options.clock ? { clock: options.clock } : {}),
    });
    await notifier.start();
    stops.push(() => notifier.stop());

    const gatewaySettings = gatewaySettingsFromEnv({
      WEB_DIST: DEFAULT_WEB_DIST,
      ...shared,
      IDENTITY_URL: identityUrl,
      EVIDENCE_URL: evidenceUrl,
    });
    const gateway = await createGateway(gatewaySettings, {
      logger: loggerFor('gateway'),
      bus,
      openapi: buildOpenApiDocument(),
      // The chunks of resumable uploads go to evidence inside this process, not over loopback HTTP.
      ...(base.UPLOADS_IN_PROCESS ? { evidenceUploadsInProcess: evidence.uploadsInProcess } : {}),
    });
    const url = await gateway.start();
    stops.push(() => gateway.stop());
    log.info({ url, dataDir: base.DATA_DIR }, 'portal ready (all-in-one)');
    const routes = () => ({ gateway: [...gateway.routes], identity: expressRoutes(identity.app), evidence: expressRoutes(evidence.app) });
    return { url, dataDir: base.DATA_DIR, stop, routes };
  } catch (error) {
    await stop();
    throw error;
  }
}
