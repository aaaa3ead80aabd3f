import type { Server } from 'node:http';
import { once } from 'node:events';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import type { MediaJob } from '@portal/contracts';
import {
  FsBlobStore,
  IdentityTokens,
  OutboxRelay,
  openDatabase,
  type BlobStore,
  type EventBus,
  type JobQueue,
  type Logger,
  type Subscription,
} from '@portal/platform';
import { evidenceDatabaseFile, type EvidenceSettings } from './config.js';
import { createEvidenceApp } from './http/app.js';
import { EvidenceService } from './domain/evidence-service.js';
import { subscribeEvidenceConsumers } from './consumers/event-consumers.js';
import { EVIDENCE_MIGRATIONS } from './repositories/sqlite/migrations.js';
import { SqliteEvidenceRepository } from './repositories/sqlite/sqlite-evidence-repository.js';
import { SqliteAuthorDirectory } from './repositories/sqlite/sqlite-author-directory.js';

export interface EvidenceRuntime {
  bus: EventBus;
  jobs: JobQueue<MediaJob>;
  logger: Logger;
  blobs?: BlobStore;
}

export interface EvidenceServiceHandle {
  evidence: EvidenceService;
  relay: OutboxRelay;
  start(): Promise<string>;
  stop(): Promise<void>;
}

const RECONCILE_EVERY_MS = 60_000;

/** Wires the evidence service; the same code runs alone or in the all-in-one process. */
export function createEvidenceService(settings: EvidenceSettings, runtime: EvidenceRuntime): EvidenceServiceHandle {
  const { logger, bus, jobs } = runtime;
  const db = openDatabase(evidenceDatabaseFile(settings.dataDir), EVIDENCE_MIGRATIONS);
  const repository = new SqliteEvidenceRepository(db);
  const blobs = runtime.blobs ?? new FsBlobStore(join(settings.dataDir, 'blobs'));
  const relay = new OutboxRelay({ store: repository.outbox, bus, logger });
  const evidence = new EvidenceService({
    evidence: repository,
    authors: new SqliteAuthorDirectory(db),
    blobs,
    jobs,
    limits: settings.limits,
    logger,
    onEventsCommitted: () => relay.kick(),
  });
  const { app, cleanUpUploads } = createEvidenceApp({
    logger,
    tokens: new IdentityTokens(settings.internalSecret),
    evidence,
    repository,
    blobs,
    tmpDir: join(settings.dataDir, 'tmp', 'evidence-uploads'),
    uploadsDir: join(settings.dataDir, 'uploads'),
    uploadExpiryMs: settings.uploadExpiryMs,
    readiness: [
      { name: 'evidence', check: () => repository.ping() },
      { name: 'blobs', check: () => blobs.ping() },
      { name: 'bus', check: () => bus.ping() },
      { name: 'jobs', check: () => jobs.ping() },
    ],
  });

  let server: Server | undefined;
  let subscriptions: Subscription[] = [];
  let timer: NodeJS.Timeout | undefined;
  const housekeeping = () => {
    evidence.reconcile().catch((error: unknown) => logger.warn({ err: error }, 'reconciling media jobs failed'));
    cleanUpUploads().catch((error: unknown) => logger.warn({ err: error }, 'removing expired uploads failed'));
  };

  return {
    evidence,
    relay,
    async start() {
      relay.start();
      subscriptions = await subscribeEvidenceConsumers(bus, evidence, logger);
      // Work left by a previous run (committed items whose job was never added) is picked up now.
      await evidence.reconcile();
      timer = setInterval(housekeeping, RECONCILE_EVERY_MS);
      timer.unref();
      server = app.listen(settings.port, settings.host);
      // Slow phones upload in chunks; a chunk may take minutes on a poor connection.
      server.requestTimeout = 15 * 60_000;
      await once(server, 'listening');
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
      for (const subscription of subscriptions) await subscription.close();
      await relay.flush().catch((error: unknown) => logger.warn({ err: error }, 'outbox not flushed'));
      await relay.stop();
      db.close();
    },
  };
}
