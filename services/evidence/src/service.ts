import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import { once } from 'node:events';
import type { AddressInfo } from 'node:net';
import { mkdir, rm } from 'node:fs/promises';
import { join } from 'node:path';
import type { Express } from 'express';
import { Redis } from 'ioredis';
import { MEDIA_TYPES, TOPICS, mediaQueueList, type MediaJob, type MediaQueueSet } from '@portal/contracts';
import {
  BackgroundSubscriptions,
  IdentityTokens,
  OutboxRelay,
  consumerChecks,
  type ListeningFirst,
  ServiceMetrics,
  connectMongo,
  serialWritesOf,
  createBlobStore,
  openDatabase,
  intentsSettledBefore,
  type InfrastructureSettings,
  type BlobStore,
  type EventBus,
  type JobQueue,
  type Logger,
} from '@portal/platform';
import { evidenceDatabaseFile, type EvidenceSettings } from './config.js';
import { createEvidenceApp } from './http/app.js';
import { EvidenceService } from './domain/evidence-service.js';
import {
  EVIDENCE_MEDIA_RESULTS_GROUP,
  EVIDENCE_USERS_GROUP,
  subscribeMediaResults,
  subscribeUserEvents,
} from './consumers/event-consumers.js';
import { EVIDENCE_MIGRATIONS } from './repositories/sqlite/migrations.js';
import { SqliteEvidenceRepository } from './repositories/sqlite/sqlite-evidence-repository.js';
import { SqliteAuthorDirectory } from './repositories/sqlite/sqlite-author-directory.js';
import { MongoAuthorDirectory, MongoEvidenceRepository } from './repositories/mongo/mongo-evidence-repository.js';
import type { EvidenceRepository } from './repositories/evidence-repository.js';
import type { AuthorDirectory } from './repositories/author-directory.js';
import { fileUploadStorage, s3UploadStorage } from './repositories/upload-storage.js';
import { ScratchBudget } from './repositories/scratch-budget.js';
import { RedisAdmissionLedger } from './repositories/upload-admissions.js';

export interface EvidenceRuntime {
  bus: EventBus;
  /** The media queues, opened with openMediaQueues. */
  mediaQueues: MediaQueueSet<JobQueue<MediaJob>>;
  logger: Logger;
  infrastructure: InfrastructureSettings;
  blobs?: BlobStore;
}

export interface EvidenceStores {
  evidence: EvidenceRepository;
  authors: AuthorDirectory;
  close(): Promise<void>;
}

/** MongoDB when MONGO_URL is set, else one SQLite file under DATA_DIR. */
export async function openEvidenceStores(infrastructure: InfrastructureSettings, logger?: Logger): Promise<EvidenceStores> {
  if (infrastructure.mongoUrl) {
    const connection = await connectMongo(infrastructure.mongoUrl, `${infrastructure.namespace}_evidence`, {
      serialWrites: infrastructure.mongoSerialWrites ?? 'auto',
    });
    logger?.info({ serialWrites: serialWritesOf(connection) }, 'mongodb: serial writes decided');
    const evidence = new MongoEvidenceRepository(connection);
    // Tried again from the start when the server goes away meanwhile: this connection is let go.
    await evidence.ensureIndexes().catch(async (error: unknown) => {
      await connection.close().catch(() => undefined);
      throw error;
    });
    return { evidence, authors: new MongoAuthorDirectory(connection), close: () => connection.close() };
  }
  const db = openDatabase(evidenceDatabaseFile(infrastructure.dataDir), EVIDENCE_MIGRATIONS);
  return {
    evidence: new SqliteEvidenceRepository(db),
    authors: new SqliteAuthorDirectory(db),
    close: async () => {
      db.close();
    },
  };
}

export interface EvidenceServiceHandle {
  evidence: EvidenceService;
  relay: OutboxRelay;
  /** The HTTP app (its router stack lists the routes served: see expressRoutes). */
  app: Express;
  /**
   * Resumable-upload requests (PATCH /api/evidence/uploads/{id}) handed over by a gateway in this
   * same process, with the headers it would send and the body stream it reads (handOverRequestBody),
   * instead of over loopback HTTP.
   */
  uploadsInProcess: (req: IncomingMessage, res: ServerResponse) => void;
  /** Starts serving; with `server` (main.ts: listening since the process started), through it. */
  start(options?: { server?: ListeningFirst }): Promise<string>;
  stop(): Promise<void>;
}

const RECONCILE_EVERY_MS = 60_000;

/** Wires the evidence service; the same code runs alone or in the all-in-one process. */
export async function createEvidenceService(settings: EvidenceSettings, runtime: EvidenceRuntime): Promise<EvidenceServiceHandle> {
  const { logger, bus, mediaQueues, infrastructure } = runtime;
  const stores = await openEvidenceStores(infrastructure, logger);
  const repository = stores.evidence;
  const blobs = runtime.blobs ?? createBlobStore(infrastructure);
  const relay = new OutboxRelay({ store: repository.outbox, bus, logger });
  const evidence = new EvidenceService({
    evidence: repository,
    authors: stores.authors,
    blobs,
    mediaQueues,
    limits: settings.limits,
    caps: settings.mediaCaps,
    olderFaceChecks: settings.olderFaceChecks,
    logger,
    onEventsCommitted: () => relay.kick(),
  });
  // With Redis (several replicas), one participant's unfinished-uploads share is checked there.
  const redis = infrastructure.redisUrl ? new Redis(infrastructure.redisUrl, { maxRetriesPerRequest: 3 }) : undefined;
  redis?.on('error', (error: unknown) => logger.warn({ err: error }, 'redis (upload admissions) not answering'));
  const metrics = new ServiceMetrics('evidence');
  for (const queue of mediaQueueList(mediaQueues)) metrics.watchQueue(queue);
  metrics.watchConsumerLag(bus, EVIDENCE_USERS_GROUP, [TOPICS.users]);
  metrics.watchConsumerLag(bus, EVIDENCE_MEDIA_RESULTS_GROUP, [TOPICS.media]);
  metrics.watchConsumers(bus, [EVIDENCE_USERS_GROUP, EVIDENCE_MEDIA_RESULTS_GROUP]);
  // How far the check of the items processed before faces were checked is (docs/OPERATIONS.md).
  metrics.gauge(
    'portal_evidence_faces_unchecked',
    'Photos and videos processed before faces were checked and not checked yet (hidden from the public with FACE_BLUR=auto)',
    ['kind'],
    async (set) => {
      set({ kind: 'photo' }, await repository.countUncheckedPictures(MEDIA_TYPES.image));
      set({ kind: 'video' }, await repository.countUncheckedPictures(MEDIA_TYPES.video));
    },
  );
  // What the consumers' handlers need: their items, and the files a deletion removes.
  const storeChecks = [
    { name: 'evidence', check: () => repository.ping() },
    { name: 'blobs', check: () => blobs.ping() },
  ];
  // This process's temporary folders (emptied at start): received multipart files, and finished
  // resumable uploads read back from S3 for inspection.
  const tmpDirs = [join(settings.dataDir, 'tmp', 'evidence-uploads'), join(settings.dataDir, 'tmp', 'finished-uploads')];
  const { app, cleanUpUploads, uploadsInProcess } = createEvidenceApp({
    metrics,
    publicLocationDecimals: settings.publicLocationDecimals,
    logger,
    onEventsCommitted: () => relay.kick(),
    tokens: new IdentityTokens(settings.internalSecret),
    evidence,
    repository,
    blobs,
    tmpDir: tmpDirs[0]!,
    uploads: infrastructure.s3
      ? s3UploadStorage(infrastructure.s3, tmpDirs[1]!, settings.uploadExpiryMs, new ScratchBudget(settings.uploadScratchBytes))
      : fileUploadStorage(join(settings.dataDir, 'uploads'), settings.uploadExpiryMs),
    unfinishedBytesPerParticipant: settings.unfinishedUploadBytesPerParticipant,
    // Replicas check one participant's share one at a time between them (Redis), not each alone.
    ...(redis ? { admissions: new RedisAdmissionLedger(redis, { prefix: `${infrastructure.namespace}:evidence-admissions:` }) } : {}),
    readiness: [
      ...storeChecks,
      { name: 'bus', check: () => bus.ping() },
      { name: 'jobs', check: () => mediaQueues.stills.ping() },
      ...consumerChecks(() => bus.consumerStates(), [EVIDENCE_USERS_GROUP, EVIDENCE_MEDIA_RESULTS_GROUP]),
    ],
  });

  let server: Server | undefined;
  const consumers = new BackgroundSubscriptions(logger);
  let timer: NodeJS.Timeout | undefined;
  const housekeeping = () => {
    evidence.reconcile().catch((error: unknown) => logger.warn({ err: error }, 'reconciling media jobs failed'));
    evidence
      .sweepBlobIntents(intentsSettledBefore(true))
      .catch((error: unknown) => logger.warn({ err: error }, 'settling interrupted blob writes failed'));
    cleanUpUploads().catch((error: unknown) => logger.warn({ err: error }, 'removing expired uploads failed'));
  };

  return {
    evidence,
    relay,
    app,
    uploadsInProcess,
    async start(options = {}) {
      relay.start();
      // Consumes once Kafka answers; the service serves meanwhile (readiness says "degraded").
      const consumerOptions = (signal: AbortSignal) => ({ dependencies: storeChecks, signal });
      consumers.start((signal) => subscribeUserEvents(bus, evidence, consumerOptions(signal)));
      consumers.start((signal) => subscribeMediaResults(bus, evidence, consumerOptions(signal)));
      // Work left by a previous run (committed items whose job was never added) is picked up now;
      // with a shared database (the distributed mode) a dependency away at start leaves it to the
      // housekeeping every minute.
      const shared = Boolean(infrastructure.mongoUrl);
      const atStart = async (work: () => Promise<unknown>, what: string) => {
        if (!shared) return void (await work());
        await work().catch((error: unknown) => logger.warn({ err: error }, `${what} failed at start; tried again within a minute`));
      };
      await atStart(() => evidence.reconcile(), 'reconciling media jobs');
      // What a previous run of this process was doing when it died (intentsSettledBefore).
      await atStart(() => evidence.sweepBlobIntents(intentsSettledBefore(shared)), 'settling interrupted blob writes');
      // Received files of requests that were cut off by the end of the previous run.
      for (const dir of tmpDirs) await rm(dir, { recursive: true, force: true }).then(() => mkdir(dir, { recursive: true }));
      await cleanUpUploads().catch((error: unknown) => logger.warn({ err: error }, 'removing expired uploads failed'));
      timer = setInterval(housekeeping, RECONCILE_EVERY_MS);
      timer.unref();
      if (options.server) {
        server = options.server.server;
        options.server.serve(app);
      } else {
        server = app.listen(settings.port, settings.host);
        await once(server, 'listening');
      }
      // Slow phones upload in chunks; a chunk may take minutes on a poor connection.
      server.requestTimeout = 15 * 60_000;
      const { port } = server.address() as AddressInfo;
      logger.info({ port }, 'evidence listening');
      return `http://${settings.host}:${port}`;
    },
    async stop() {
      if (timer) clearInterval(timer);
      if (server) {
        server.closeIdleConnections();
        await new Promise<void>((resolve) => server!.close(() => resolve()));
      }
      await consumers.close();
      await relay.flush().catch((error: unknown) => logger.warn({ err: error }, 'outbox not flushed'));
      await relay.stop();
      await stores.close();
      redis?.disconnect();
    },
  };
}
