import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Readable } from 'node:stream';
import { pino } from 'pino';
import sharp from 'sharp';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TOPICS } from '@portal/contracts';
import {
  FsBlobStore,
  IDENTITY_HEADER,
  IdentityTokens,
  SqliteEventBus,
  currentRequestId,
  infrastructureFromEnv,
  type BlobInfo,
  type BusMessage,
  type Subscription,
} from '@portal/platform';
import { waitFor } from '@portal/platform/testing';
import { identitySettingsFromEnv } from '../src/config.js';
import { createIdentityService, type IdentityService } from '../src/service.js';

// The request id reaches the events and the audit entries a request makes through the request
// context (AsyncLocalStorage), not through parameters. Two requests to the identity service as it
// runs (its own HTTP server, hot routes in front of express, a SQLite file, the SQLite bus): a
// registration held in the middle of its work (its picture's write waits) while an administrator's
// change runs from start to end. Each one's events must carry its own X-Request-Id; a "current
// request" kept in a module variable would have given the registration the other request's id.

const SECRET = 'request-context-http-test-secret-0123456789';
const ADMIN = { username: 'ctxadmin', email: 'ctxadmin@example.org', password: 'ctx-admin-pass-1' };

/** The file blob store, whose writes of verification photos wait while `hold` is set. */
class HeldBlobStore extends FsBlobStore {
  hold: Promise<void> | null = null;
  held = false;
  override async put(key: string, body: Readable | Uint8Array, options: { contentType: string }): Promise<BlobInfo> {
    if (this.hold && key.includes('/verification-')) {
      this.held = true;
      await this.hold;
    }
    return super.put(key, body, options);
  }
}

let dir: string;
let bus: SqliteEventBus;
let blobs: HeldBlobStore;
let identity: IdentityService;
let url: string;
let subscription: Subscription;
/** What the test's own consumer received, with the request id its handler ran in. */
const received: { message: BusMessage; handlerRequestId: string | undefined }[] = [];

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'identity-request-context-'));
  const logger = pino({ level: 'silent' });
  bus = new SqliteEventBus({ file: join(dir, 'bus.sqlite'), logger });
  blobs = new HeldBlobStore(join(dir, 'blobs'));
  identity = await createIdentityService(
    identitySettingsFromEnv({
      DATA_DIR: dir,
      IDENTITY_HOST: '127.0.0.1',
      IDENTITY_PORT: '0',
      AUTH_RATE_LIMITS: 'false',
      INTERNAL_SECRET: SECRET,
      ADMIN_USERNAME: ADMIN.username,
      ADMIN_EMAIL: ADMIN.email,
      ADMIN_PASSWORD: ADMIN.password,
      MODERATION_DIGEST_MINUTES: '0',
    }),
    {
      bus,
      blobs,
      infrastructure: { ...infrastructureFromEnv({ DATA_DIR: dir }), kafkaBrokers: null, redisUrl: null, mongoUrl: null, s3: null },
      logger,
    },
  );
  url = await identity.start();
  // The administrator's account, made at start, is published before the test's consumer starts at the end.
  await identity.relay.flush();
  subscription = await bus.subscribe({
    groupId: 'request-context-test',
    topics: [TOPICS.users, TOPICS.audit],
    fromBeginning: false,
    handler: async (message) => void received.push({ message, handlerRequestId: currentRequestId() }),
  });
});

afterAll(async () => {
  await subscription?.close();
  await identity?.stop();
  await bus?.close();
  if (dir) await rm(dir, { recursive: true, force: true });
});

const eventsOf = (type: string) => received.filter(({ message }) => message.value.type === type);
/** The audit entries of one action (the test's own sign-in, outside any request, records one too). */
const auditsOf = (action: string) =>
  eventsOf('audit.recorded').filter(({ message }) => (message.value.data as { action: string }).action === action);

describe('the request id of concurrent requests', () => {
  it('stays each request’s own in the events and audit entries it makes, while the other runs in between', async () => {
    const { user: admin } = await identity.users.login(ADMIN.username, ADMIN.password);
    const token = await new IdentityTokens(SECRET).signCaller({
      userId: admin.id,
      role: admin.role,
      username: admin.username,
      sessionId: 'hash-of-a-session',
    });
    const photo = await sharp({ create: { width: 48, height: 48, channels: 3, background: { r: 120, g: 90, b: 60 } } })
      .jpeg()
      .toBuffer();
    const form = new FormData();
    for (const [name, value] of Object.entries({
      username: 'ctxperson',
      password: 'ctx-person-pass-1',
      email: 'ctxperson@example.org',
      phone_number: '5551234567',
      full_name: 'Context Person',
      pronouns: 'They/Them',
    })) {
      form.append(name, value);
    }
    form.append('verification_photo', new Blob([new Uint8Array(photo)], { type: 'image/jpeg' }), 'face.jpg');

    let release: () => void = () => undefined;
    blobs.hold = new Promise<void>((resolve) => (release = resolve));
    const registration = fetch(`${url}/api/user/register`, {
      method: 'POST',
      headers: { 'x-request-id': 'registration-request' },
      body: form,
    });
    await waitFor(() => blobs.held, { timeoutMs: 15_000, what: 'the registration to reach its photo write' });

    // Meanwhile, an administrator's change, answered before the registration goes on.
    const change = await fetch(`${url}/api/user/admin/${admin.id}`, {
      method: 'PUT',
      headers: { 'content-type': 'application/json', 'x-request-id': 'admin-request', [IDENTITY_HEADER]: token },
      body: JSON.stringify({ username: admin.username, email: admin.email, phone_number: '5557654321', full_name: 'Changed Name' }),
    });
    expect(change.status).toBe(200);
    await identity.relay.flush();
    await waitFor(() => eventsOf('user.updated').length === 1 && auditsOf('user.edit').length === 1, {
      timeoutMs: 10_000,
      what: "the administrator's events",
    });

    blobs.hold = null;
    release();
    const registered = await registration;
    expect(registered.status).toBe(201);
    expect(registered.headers.get('x-request-id')).toBe('registration-request');
    await identity.relay.flush();
    await waitFor(() => eventsOf('user.registered').length === 1 && eventsOf('email-verification.requested').length === 1, {
      timeoutMs: 10_000,
      what: "the registration's events",
    });

    const requestIds = (type: string) => eventsOf(type).map(({ message }) => message.value.trace?.requestId);
    expect(requestIds('user.updated')).toEqual(['admin-request']);
    expect(auditsOf('user.edit').map(({ message }) => message.value.trace?.requestId)).toEqual(['admin-request']);
    expect(auditsOf('admin.login').map(({ message }) => message.value.trace?.requestId)).toEqual([undefined]);
    expect(requestIds('user.registered')).toEqual(['registration-request']);
    expect(requestIds('email-verification.requested')).toEqual(['registration-request']);
    // A consumer's handler runs in the context of the request its event came from.
    for (const { message, handlerRequestId } of received) expect(handlerRequestId).toBe(message.value.trace?.requestId);
  });
});
