import type { IncomingMessage, ServerResponse } from 'node:http';
import express, { type Express } from 'express';
import {
  callerIdentity,
  errorHandler,
  healthRoutes,
  notFoundHandler,
  requestContext,
  requestLogging,
  type BlobStore,
  type IdentityTokens,
  type Logger,
  type ReadinessCheck,
  type ServiceMetrics,
  metricsRoute,
} from '@portal/platform';
import type { EvidenceService } from '../domain/evidence-service.js';
import type { EvidenceRepository } from '../repositories/evidence-repository.js';
import { evidenceRoutes } from './routes/evidence-routes.js';
import { mediaRoutes } from './routes/media-routes.js';
import { uploadRoutes } from './routes/upload-routes.js';
import { internalRoutes } from './routes/internal-routes.js';
import { exportRoutes } from './routes/export-routes.js';
import { InvestigatorExporter } from '../domain/investigator-export.js';
import type { UploadStorage } from '../repositories/upload-storage.js';
import type { AdmissionLedger } from '../repositories/upload-admissions.js';

export interface EvidenceAppDeps {
  logger: Logger;
  tokens: IdentityTokens;
  evidence: EvidenceService;
  repository: EvidenceRepository;
  blobs: BlobStore;
  tmpDir: string;
  uploads: UploadStorage;
  /** The bytes one participant's unfinished resumable uploads may declare together. */
  unfinishedBytesPerParticipant: number;
  /** Where that share's checks meet: this process alone by default, Redis for several replicas. */
  admissions?: AdmissionLedger;
  readiness: ReadinessCheck[];
  metrics: ServiceMetrics;
  /** Decimals of a device position in public answers. */
  publicLocationDecimals: number;
  /** After a commit that carries events (the outbox relay publishes them at once). */
  onEventsCommitted: () => void;
}

export function createEvidenceApp(deps: EvidenceAppDeps): {
  app: Express;
  cleanUpUploads: () => Promise<number>;
  /** Resumable-upload requests handed over inside the process (the all-in-one gateway). */
  uploadsInProcess: (req: IncomingMessage, res: ServerResponse) => void;
} {
  const app = express();
  app.disable('x-powered-by');
  app.set('trust proxy', true);
  app.use(requestContext());
  app.use(deps.metrics.expressMiddleware());
  app.use(requestLogging(deps.logger));
  healthRoutes(app, deps.readiness);
  deps.metrics.watchDependencies(deps.readiness);
  metricsRoute(app, deps.metrics);
  app.use(internalRoutes({ tokens: deps.tokens, repository: deps.repository, blobs: deps.blobs }));
  app.use(callerIdentity(deps.tokens));
  const uploads = uploadRoutes({
    evidence: deps.evidence,
    repository: deps.repository,
    tokens: deps.tokens,
    logger: deps.logger,
    storage: deps.uploads,
    unfinishedBytesPerParticipant: deps.unfinishedBytesPerParticipant,
    ...(deps.admissions ? { admissions: deps.admissions } : {}),
  });
  // Resumable uploads read their own request bodies: they come before any body parser.
  app.use(uploads.router);
  app.use(express.json({ limit: '64kb' }));
  app.use(mediaRoutes({ evidence: deps.evidence, blobs: deps.blobs }));
  app.use(
    exportRoutes({
      exporter: new InvestigatorExporter({
        evidence: deps.repository,
        blobs: deps.blobs,
        logger: deps.logger,
        onEventsCommitted: deps.onEventsCommitted,
      }),
    }),
  );
  app.use(evidenceRoutes({ evidence: deps.evidence, tmpDir: deps.tmpDir, publicLocationDecimals: deps.publicLocationDecimals }));
  app.use(notFoundHandler());
  app.use(errorHandler(deps.logger));
  return { app, cleanUpUploads: uploads.cleanUp, uploadsInProcess: uploads.handleInProcess };
}
