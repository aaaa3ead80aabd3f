import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pino } from 'pino';
import sharp from 'sharp';
import { ROLE_ADMIN, ROLE_USER, TOPICS, type EventEnvelope, type RegisterRequest } from '@portal/contracts';
import {
  OutboxRelay,
  SealedBox,
  createBlobStore,
  createEventBus,
  infrastructureFromEnv,
  type BlobStore,
  type CallerIdentity,
  type Subscription,
} from '@portal/platform';
import { identitySettingsFromEnv } from '../../src/config.js';
import type { PasswordResetService } from '../../src/domain/password-reset-service.js';
import type { SessionService } from '../../src/domain/session-service.js';
import type { UserService } from '../../src/domain/user-service.js';
import { buildPasswordResetService, buildUserService, openIdentityStores, type IdentityStores } from '../../src/service.js';

/**
 * The identity use cases over the embedded adapters, wired by the composition root's own helpers
 * (openIdentityStores, buildUserService) with the settings read from an environment naming only
 * a temporary DATA_DIR: a SQLite file, the SQLite event bus (the outbox relayed to it as
 * service.ts does) and the file blob store. The password reset service is made with the same
 * arguments as in createIdentityService (which does not hand it out), with a clock the test moves.
 */
export interface EmbeddedIdentity {
  dir: string;
  users: UserService;
  sessions: SessionService;
  resets: PasswordResetService;
  stores: IdentityStores;
  blobs: BlobStore;
  /** Events published through the outbox and the bus, in order. */
  events: EventEnvelope[];
  /** Opens what the service sealed into an event (a reset code, a verification token). */
  unseal(sealed: string): string;
  /** Moves the reset service's clock forward. */
  advance(ms: number): void;
  /** A received picture (a temporary file the service removes once read). */
  photo(): Promise<{ path: string }>;
  close(): Promise<void>;
}

export const MAX_RESET_ATTEMPTS = 5;

export async function startEmbeddedIdentity(): Promise<EmbeddedIdentity> {
  const dir = await mkdtemp(join(tmpdir(), 'identity-domain-'));
  const env = {
    DATA_DIR: dir,
    INTERNAL_SECRET: 'a-test-secret-of-at-least-32-characters',
    MODERATION_DIGEST_MINUTES: '0',
  };
  const logger = pino({ level: 'silent' });
  const infrastructure = infrastructureFromEnv(env);
  const settings = identitySettingsFromEnv(env);
  const bus = createEventBus(infrastructure, 'identity-test', logger);
  const stores = await openIdentityStores(infrastructure, logger);
  const blobs = createBlobStore(infrastructure);
  const relay = new OutboxRelay({ store: stores.users.outbox, bus, logger });
  const { users, sessions } = buildUserService({
    stores,
    blobs,
    logger,
    sessionIdleDays: settings.sessionIdleDays,
    secret: settings.internalSecret,
    termsVersion: settings.termsVersion,
    onEventsCommitted: () => relay.kick(),
  });
  let offset = 0;
  const resets = buildPasswordResetService({
    stores,
    sessions,
    settings,
    clock: () => Date.now() + offset,
    logger,
    onEventsCommitted: () => relay.kick(),
  });
  const events: EventEnvelope[] = [];
  relay.start();
  const subscription: Subscription = await bus.subscribe({
    groupId: 'identity-domain-test',
    topics: [TOPICS.users, TOPICS.sessions, TOPICS.passwordResets, TOPICS.audit],
    handler: async (message) => {
      events.push(message.value);
    },
  });
  const sealer = new SealedBox(settings.internalSecret);
  let photos = 0;
  return {
    dir,
    users,
    sessions,
    resets,
    stores,
    blobs,
    events,
    unseal: (sealed) => sealer.open(sealed),
    advance(ms) {
      offset += ms;
    },
    async photo() {
      const path = join(dir, `photo-${photos++}.jpg`);
      await writeFile(
        path,
        await sharp({
          create: {
            width: 32,
            height: 32,
            channels: 3,
            background: { r: 10, g: 120, b: 60 },
          },
        })
          .jpeg()
          .toBuffer(),
      );
      return { path };
    },
    async close() {
      await subscription.close();
      await relay.flush().catch(() => undefined);
      await relay.stop();
      await stores.close();
      await bus.close();
      await rm(dir, { recursive: true, force: true });
    },
  };
}

export function registration(name: string, overrides: Partial<RegisterRequest> = {}): RegisterRequest {
  return {
    username: name,
    password: 'correct horse battery',
    email: `${name}@example.org`,
    phone_number: '0123456789',
    full_name: `Person ${name}`,
    pronouns: '',
    ...overrides,
  };
}

export const callerOf = (user: { id: string; username: string; role: number }, sessionId = 'session'): CallerIdentity => ({
  userId: user.id,
  username: user.username,
  role: user.role,
  sessionId,
  videoWatched: true,
});

export { ROLE_ADMIN, ROLE_USER };

/** The first thrown error of a call that must fail, with its status (fails the test when it succeeds). */
export async function refusalOf(call: Promise<unknown>): Promise<{
  status: number;
  message: string;
  fields?: Record<string, string>;
}> {
  const error = await call.then(
    () => null,
    (thrown: unknown) => thrown,
  );
  if (!error) throw new Error('the call should have been refused');
  return error as {
    status: number;
    message: string;
    fields?: Record<string, string>;
  };
}
