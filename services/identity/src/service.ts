import { createServer, type Server } from 'node:http';
import { mkdir, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { once } from 'node:events';
import type { AddressInfo } from 'node:net';
import type { Express } from 'express';
import { Redis } from 'ioredis';
import {
  BackgroundSubscriptions,
  ConfigError,
  IdentityTokens,
  OutboxRelay,
  consumerChecks,
  untilAvailable,
  type ListeningFirst,
  SealedBox,
  ServiceMetrics,
  connectMongo,
  serialWritesOf,
  createBlobStore,
  intentsSettledBefore,
  type InfrastructureSettings,
  openDatabase,
  parseInput,
  type BlobStore,
  type EventBus,
  type Logger,
  type SharedSecret,
} from '@portal/platform';
import { DEFAULT_TERMS_VERSION, adminUserUpdateSchema, registerRequestSchema } from '@portal/contracts';
import { createIdentityApp } from './http/app.js';
import { withHotRoutes } from './http/hot-routes.js';
import { HttpEvidenceSource } from './clients/evidence-client.js';
import { ParticipantExporter } from './domain/participant-export.js';
import { identityDatabaseFile, type IdentitySettings } from './config.js';
import { PasswordHasher } from './domain/passwords.js';
import { PhotoProcessor } from './domain/photo-processor.js';
import { SessionService } from './domain/session-service.js';
import { UserService, type UserServiceDeps } from './domain/user-service.js';
import { EmailVerificationTokens } from './domain/email-verification.js';
import { PasswordResetService } from './domain/password-reset-service.js';
import { SqliteResetCodeStore } from './repositories/sqlite/sqlite-reset-code-store.js';
import { IDENTITY_MIGRATIONS } from './repositories/sqlite/migrations.js';
import { SqliteSessionStore } from './repositories/sqlite/sqlite-session-store.js';
import { SqliteUserRepository } from './repositories/sqlite/sqlite-user-repository.js';
import { MongoUserRepository } from './repositories/mongo/mongo-user-repository.js';
import { RedisSessionStore } from './repositories/redis/redis-session-store.js';
import { RedisResetCodeStore } from './repositories/redis/redis-reset-code-store.js';
import type { ResetCodeStore, SessionStore, UserRepository } from './repositories/user-repository.js';
import type { AuditLogStore } from './repositories/audit-log-store.js';
import { SqliteAuditLog } from './repositories/sqlite/sqlite-audit-log.js';
import { MongoAuditLog } from './repositories/mongo/mongo-audit-log.js';
import { AuditTrail } from './domain/audit-trail.js';
import { AUDIT_CONSUMER, subscribeAuditConsumer } from './consumers/audit-consumer.js';
import type { ScheduleStore } from './repositories/schedule-store.js';
import { SqliteScheduleStore } from './repositories/sqlite/sqlite-schedule-store.js';
import { MongoScheduleStore } from './repositories/mongo/mongo-schedule-store.js';
import { ModerationDigest } from './domain/moderation-digest.js';
import type { AppointmentStore } from './repositories/appointment-store.js';
import { SqliteAppointmentStore } from './repositories/sqlite/sqlite-appointment-store.js';
import { MongoAppointmentStore } from './repositories/mongo/mongo-appointment-store.js';
import { AppointmentService } from './domain/appointment-service.js';

export interface IdentityRuntime {
  bus: EventBus;
  logger: Logger;
  infrastructure: InfrastructureSettings;
  blobs?: BlobStore;
  /** The time, in ms; tests give their own to make reset codes expire. */
  clock?: () => number;
}

export interface IdentityService {
  users: UserService;
  relay: OutboxRelay;
  /** The HTTP app (its router stack lists the routes served: see expressRoutes). */
  app: Express;
  /**
   * Starts serving; answers the base URL. With `server` (main.ts: listening since the process
   * started, answering "starting"), serves through it instead of listening anew.
   */
  start(options?: { server?: ListeningFirst }): Promise<string>;
  stop(): Promise<void>;
}

export interface IdentityStores {
  users: UserRepository;
  sessions: SessionStore;
  resetCodes: ResetCodeStore;
  /** The audit log (append-only). */
  audit: AuditLogStore;
  /** Runs of periodic work (the moderator digest). */
  schedule: ScheduleStore;
  /** Appointments (their events go out through the users' outbox relay). */
  appointments: AppointmentStore;
  /** Redis, when the stores are distributed (shared with the rate limiter). */
  redis: Redis | null;
  close(): Promise<void>;
}

/**
 * The stores, chosen by configuration: MongoDB for users and Redis for sessions and reset codes
 * when MONGO_URL is set (REDIS_URL is then required), else one SQLite file under DATA_DIR.
 */
export async function openIdentityStores(infrastructure: InfrastructureSettings, logger?: Logger): Promise<IdentityStores> {
  if (infrastructure.mongoUrl) {
    if (!infrastructure.redisUrl) throw new ConfigError('MONGO_URL needs REDIS_URL too: sessions and reset codes live in Redis');
    const connection = await connectMongo(infrastructure.mongoUrl, `${infrastructure.namespace}_identity`, {
      serialWrites: infrastructure.mongoSerialWrites ?? 'auto',
    });
    logger?.info({ serialWrites: serialWritesOf(connection) }, 'mongodb: serial writes decided');
    const appointments = new MongoAppointmentStore(connection);
    // One outbox relay publishes the events waiting in user and appointment documents alike.
    const users = new MongoUserRepository(connection, [appointments.model]);
    const audit = new MongoAuditLog(connection);
    try {
      await appointments.ensureIndexes();
      await users.ensureIndexes();
      await audit.ensureIndexes();
    } catch (error) {
      // Tried again from the start (the server went away meanwhile): this connection is let go.
      await connection.close().catch(() => undefined);
      throw error;
    }
    const redis = new Redis(infrastructure.redisUrl, { maxRetriesPerRequest: 3 });
    const prefix = `${infrastructure.namespace}:identity`;
    return {
      users,
      sessions: new RedisSessionStore(redis, prefix),
      resetCodes: new RedisResetCodeStore(redis, prefix),
      audit,
      schedule: new MongoScheduleStore(connection),
      appointments,
      redis,
      close: async () => {
        redis.disconnect();
        await connection.close();
      },
    };
  }
  const db = openDatabase(identityDatabaseFile(infrastructure.dataDir), IDENTITY_MIGRATIONS);
  return {
    users: new SqliteUserRepository(db),
    sessions: new SqliteSessionStore(db),
    resetCodes: new SqliteResetCodeStore(db),
    audit: new SqliteAuditLog(db),
    schedule: new SqliteScheduleStore(db),
    appointments: new SqliteAppointmentStore(db),
    redis: null,
    close: async () => {
      db.close();
    },
  };
}

export interface UserServiceParts {
  stores: IdentityStores;
  blobs: BlobStore;
  logger: Logger;
  sessionIdleDays: number;
  /** The services' shared secret (signs verification links, seals secrets in events), and the previous one during a rotation. */
  secret: string | SharedSecret;
  /** The current participation terms (TERMS_VERSION); the ops command registers nobody and may leave it out. */
  termsVersion?: string;
  onEventsCommitted: () => void;
  addressChanged?: UserServiceDeps['addressChanged'];
}

/** The use cases over the given stores (the HTTP app and the admin command both use this). */
export function buildUserService(parts: UserServiceParts): { users: UserService; sessions: SessionService } {
  const sessions = new SessionService(parts.stores.sessions, { idleMs: parts.sessionIdleDays * 24 * 3600_000 });
  const users = new UserService({
    users: parts.stores.users,
    resetCodes: parts.stores.resetCodes,
    sessions,
    passwords: new PasswordHasher(),
    photos: new PhotoProcessor(),
    blobs: parts.blobs,
    logger: parts.logger,
    verification: new EmailVerificationTokens(parts.secret),
    sealer: new SealedBox(parts.secret),
    termsVersion: parts.termsVersion ?? DEFAULT_TERMS_VERSION,
    onEventsCommitted: parts.onEventsCommitted,
    ...(parts.addressChanged ? { addressChanged: parts.addressChanged } : {}),
  });
  return { users, sessions };
}

/** Reset codes: made, sealed into their event, checked with at most five tries. */
export function buildPasswordResetService(parts: {
  stores: IdentityStores;
  sessions: SessionService;
  settings: Pick<IdentitySettings, 'internalSecret' | 'resetCodeTtlMs'>;
  clock: () => number;
  logger: Logger;
  onEventsCommitted: () => void;
}): PasswordResetService {
  return new PasswordResetService({
    users: parts.stores.users,
    codes: parts.stores.resetCodes,
    sessions: parts.sessions,
    passwords: new PasswordHasher(),
    sealer: new SealedBox(parts.settings.internalSecret),
    secret: parts.settings.internalSecret,
    codeTtlMs: parts.settings.resetCodeTtlMs,
    maxAttempts: 5,
    clock: parts.clock,
    logger: parts.logger,
    onEventsCommitted: parts.onEventsCommitted,
  });
}

const SWEEP_EVERY_MS = 10 * 60_000;

/** Wires the identity service from its settings; the same code runs alone or in the all-in-one process. */
export async function createIdentityService(settings: IdentitySettings, runtime: IdentityRuntime): Promise<IdentityService> {
  const logger = runtime.logger;
  const stores = await openIdentityStores(runtime.infrastructure, logger);
  const blobs = runtime.blobs ?? createBlobStore(runtime.infrastructure);
  const relay = new OutboxRelay({ store: stores.users.outbox, bus: runtime.bus, logger });
  const appointments = new AppointmentService({
    store: stores.appointments,
    users: stores.users,
    settings: settings.appointments,
    logger,
    onEventsCommitted: () => relay.kick(),
    ...(runtime.clock ? { clock: runtime.clock } : {}),
  });
  const { users, sessions } = buildUserService({
    stores,
    blobs,
    logger,
    sessionIdleDays: settings.sessionIdleDays,
    secret: settings.internalSecret,
    termsVersion: settings.termsVersion,
    onEventsCommitted: () => relay.kick(),
    addressChanged: (before, after) => appointments.followAddress(before, after),
  });
  const resets = buildPasswordResetService({
    stores,
    sessions,
    settings,
    clock: runtime.clock ?? Date.now,
    logger,
    onEventsCommitted: () => relay.kick(),
  });
  const tokens = new IdentityTokens(settings.internalSecret);
  const evidenceSource = new HttpEvidenceSource(settings.evidenceUrl, tokens);
  const digest =
    settings.moderationDigestMs > 0
      ? new ModerationDigest({
          users: stores.users,
          schedule: stores.schedule,
          evidence: evidenceSource,
          logger,
          everyMs: settings.moderationDigestMs,
          onEventsCommitted: () => relay.kick(),
          ...(runtime.clock ? { clock: runtime.clock } : {}),
        })
      : undefined;
  const trail = new AuditTrail({ store: stores.audit, users: stores.users, logger });
  // Where received pictures wait while they are checked (this process's alone: emptied at start).
  const uploadsTmpDir = join(settings.dataDir, 'tmp', 'identity-uploads');
  const metrics = new ServiceMetrics('identity');
  metrics.watchConsumerLag(runtime.bus, AUDIT_CONSUMER.groupId, AUDIT_CONSUMER.topics);
  metrics.watchConsumers(runtime.bus, [AUDIT_CONSUMER.groupId]);
  const storeChecks = [
    { name: 'users', check: () => stores.users.ping() },
    { name: 'audit', check: () => stores.audit.ping() },
  ];
  const app = createIdentityApp({
    logger,
    tokens,
    users,
    resets,
    rateLimits: settings.authRateLimits,
    registerPerMinute: settings.registerRateLimitPerMinute,
    redis: stores.redis,
    namespace: runtime.infrastructure.namespace,
    sessions,
    userRepository: stores.users,
    trail,
    exporter: new ParticipantExporter({
      users: stores.users,
      resetCodes: stores.resetCodes,
      blobs,
      evidence: evidenceSource,
      appointments,
      logger,
      ...(runtime.clock ? { clock: runtime.clock } : {}),
    }),
    appointments,
    blobs,
    cookie: { name: settings.cookieName, secure: settings.cookieSecure, maxAgeMs: settings.sessionIdleDays * 24 * 3600_000 },
    uploads: { tmpDir: uploadsTmpDir, maxBytes: settings.photoMaxBytes },
    metrics,
    readiness: [
      ...storeChecks,
      { name: 'appointments', check: () => stores.appointments.ping() },
      { name: 'sessions', check: () => stores.sessions.ping() },
      { name: 'blobs', check: () => blobs.ping() },
      { name: 'bus', check: () => runtime.bus.ping() },
      ...consumerChecks(() => runtime.bus.consumerStates(), [AUDIT_CONSUMER.groupId]),
    ],
  });
  let server: Server | undefined;
  let timer: NodeJS.Timeout | undefined;
  const consumers = new BackgroundSubscriptions(logger);

  return {
    users,
    relay,
    app,
    async start(options = {}) {
      // Pictures of requests cut off by the end of the previous run of this process.
      await rm(uploadsTmpDir, { recursive: true, force: true }).then(() => mkdir(uploadsTmpDir, { recursive: true }));
      // Pictures a previous run was writing or deleting when it died (intentsSettledBefore); with
      // a shared database, notes of other replicas are settled every few minutes once old enough
      // (so a sweep that fails at start, S3 away, is done then).
      const shared = Boolean(runtime.infrastructure.mongoUrl);
      const sweep = users.sweepPictureIntents(intentsSettledBefore(shared));
      if (shared)
        await sweep.catch((error: unknown) => logger.warn({ err: error }, 'settling interrupted picture writes failed; tried again later'));
      else await sweep;
      if (shared) {
        timer = setInterval(() => {
          users
            .sweepPictureIntents(intentsSettledBefore(true))
            .catch((error: unknown) => logger.warn({ err: error }, 'settling interrupted picture writes failed'));
        }, SWEEP_EVERY_MS);
        timer.unref();
      }
      if (settings.admin) {
        const admin = settings.admin;
        // The same rules as everyone else's account, so that the first admin can log in.
        parseInput(registerRequestSchema.pick({ username: true, email: true, password: true }), admin);
        parseInput(adminUserUpdateSchema.pick({ username: true, email: true }), admin);
        const outcome = await untilAvailable(() => users.ensureAdmin(admin), { what: 'the first administrator', logger });
        logger.info({ username: admin.username, outcome }, 'first administrator');
      }
      relay.start();
      // Consumes once Kafka answers; the service serves meanwhile (readiness says "degraded").
      consumers.start((signal) => subscribeAuditConsumer(runtime.bus, trail, { dependencies: storeChecks, signal }));
      digest?.start();
      // The web app's most frequent questions are answered before express (http/hot-routes.ts).
      const handler = withHotRoutes(app, { tokens, users, logger, metrics });
      if (options.server) {
        server = options.server.server;
        options.server.serve(handler);
      } else {
        server = createServer(handler).listen(settings.port, settings.host);
        await once(server, 'listening');
      }
      const { port } = server.address() as AddressInfo;
      logger.info({ port }, 'identity listening');
      return `http://${settings.host}:${port}`;
    },
    async stop() {
      if (timer) clearInterval(timer);
      if (server) {
        server.closeIdleConnections();
        await new Promise<void>((resolve) => server!.close(() => resolve()));
      }
      await digest?.stop();
      await consumers.close();
      // Publish what is committed before the bus goes away; what fails stays in the outbox.
      await relay.flush().catch((error: unknown) => logger.warn({ err: error }, 'outbox not flushed'));
      await relay.stop();
      await stores.close();
    },
  };
}
