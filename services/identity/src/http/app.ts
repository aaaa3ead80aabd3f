import express, { type Express } from 'express';
import {
  callerIdentity,
  errorHandler,
  healthRoutes,
  notFoundHandler,
  requestContext,
  requestLogging,
  type IdentityTokens,
  type Logger,
  type ReadinessCheck,
  type BlobStore,
  type ServiceMetrics,
  metricsRoute,
} from '@portal/platform';
import type { UserService } from '../domain/user-service.js';
import type { PasswordResetService } from '../domain/password-reset-service.js';
import type { Redis } from 'ioredis';
import { authRateLimits, redisRateLimitStore } from './rate-limits.js';
import { passwordResetRoutes } from './routes/password-reset-routes.js';
import type { SessionService } from '../domain/session-service.js';
import type { UserRepository } from '../repositories/user-repository.js';
import type { SessionCookieSettings } from './session-cookie.js';
import type { PhotoUploadSettings } from './uploads.js';
import { accountRoutes } from './routes/account-routes.js';
import { adminRoutes } from './routes/admin-routes.js';
import { pictureRoutes } from './routes/picture-routes.js';
import { internalRoutes } from './routes/internal-routes.js';
import type { ParticipantExporter } from '../domain/participant-export.js';
import type { AuditTrail } from '../domain/audit-trail.js';
import { auditRoutes } from './routes/audit-routes.js';
import { appointmentRoutes, internalAppointmentRoutes } from './routes/appointment-routes.js';
import type { AppointmentService } from '../domain/appointment-service.js';

export interface IdentityAppDeps {
  logger: Logger;
  tokens: IdentityTokens;
  users: UserService;
  resets: PasswordResetService;
  rateLimits: boolean;
  /** Registrations per minute from one client address (0 = no limit). */
  registerPerMinute: number;
  /** Shared rate-limit counters across replicas, when the stores are distributed. */
  redis: Redis | null;
  namespace: string;
  sessions: SessionService;
  userRepository: UserRepository;
  trail: AuditTrail;
  exporter: ParticipantExporter;
  appointments: AppointmentService;
  blobs: BlobStore;
  cookie: SessionCookieSettings;
  uploads: PhotoUploadSettings;
  readiness: ReadinessCheck[];
  metrics: ServiceMetrics;
}

export function createIdentityApp(deps: IdentityAppDeps): Express {
  const app = express();
  app.disable('x-powered-by');
  // Only the gateway reaches this service; it tells us the original protocol and address.
  app.set('trust proxy', true);
  // The plain GET /api/user and GET /api/session are answered before this app (hot-routes.ts), with
  // what these middlewares do for them (request context, metrics, request id and log line, caller token): a
  // middleware added here for every request has its place there too.
  app.use(requestContext());
  app.use(deps.metrics.expressMiddleware());
  app.use(requestLogging(deps.logger));
  healthRoutes(app, deps.readiness);
  deps.metrics.watchDependencies(deps.readiness);
  metricsRoute(app, deps.metrics);
  app.use(express.json({ limit: '64kb' }));
  app.use(internalRoutes({ tokens: deps.tokens, sessions: deps.sessions, users: deps.userRepository }));
  app.use(internalAppointmentRoutes({ appointments: deps.appointments, tokens: deps.tokens }));
  app.use(callerIdentity(deps.tokens));
  const limits = authRateLimits({
    enabled: deps.rateLimits,
    registerPerMinute: deps.registerPerMinute,
    accountOfLogin: (login) => deps.users.accountOfLogin(login),
    store: deps.redis ? redisRateLimitStore(deps.redis, deps.namespace) : undefined,
  });
  app.use(accountRoutes({ users: deps.users, cookie: deps.cookie, uploads: deps.uploads, limits }));
  app.use(passwordResetRoutes({ resets: deps.resets, users: deps.users, limits }));
  app.use(adminRoutes({ users: deps.users, exporter: deps.exporter, limits, appointments: deps.appointments }));
  app.use(appointmentRoutes({ appointments: deps.appointments }));
  app.use(auditRoutes({ trail: deps.trail }));
  app.use(pictureRoutes({ users: deps.users, blobs: deps.blobs }));
  app.use(notFoundHandler());
  app.use(errorHandler(deps.logger));
  return app;
}
