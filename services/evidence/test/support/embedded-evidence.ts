import { mkdtemp, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pino } from 'pino';
import sharp from 'sharp';
import {
  ROLE_ADMIN,
  ROLE_USER,
  TOPICS,
  mediaQueueList,
  openMediaQueues,
  type EventEnvelope,
  type MediaJob,
  type MediaQueueSet,
} from '@portal/contracts';
import {
  createBlobStore,
  createEventBus,
  createJobQueue,
  infrastructureFromEnv,
  type BlobStore,
  type CallerIdentity,
  type EventBus,
  type JobQueue,
  type Subscription,
} from '@portal/platform';
import { evidenceSettingsFromEnv } from '../../src/config.js';
import { createEvidenceService, openEvidenceStores, type EvidenceServiceHandle, type EvidenceStores } from '../../src/service.js';

/**
 * The evidence service as its composition root wires it on the embedded adapters (service.ts,
 * with the settings and infrastructure read from an environment naming only a temporary
 * DATA_DIR): SQLite files, the SQLite event bus and job queue, and the file blob store. Nothing
 * listens; tests call the domain (handle.evidence) and read what it stored through a second
 * handle on the same SQLite file (stores), the blobs and the bus.
 */
export interface EmbeddedEvidence {
  dir: string;
  /** Where it listens (with listen: true). */
  baseUrl: string | null;
  handle: EvidenceServiceHandle;
  stores: EvidenceStores;
  blobs: BlobStore;
  bus: EventBus;
  mediaQueues: MediaQueueSet<JobQueue<MediaJob>>;
  /** The events the service published (through its outbox relay and the bus), in order. */
  events: EventEnvelope[];
  /** The keys of every blob in the file blob store (read from its folder), sorted. */
  blobKeys(): Promise<string[]>;
  /** Writes a file the service takes over, as the HTTP layer hands a received upload. */
  receivedFile(name: string, bytes: Buffer): Promise<{ path: string }>;
  close(): Promise<void>;
}

/** The services' shared secret in these tests (signs the caller tokens a gateway would send). */
export const TEST_SECRET = 'a-test-secret-of-at-least-32-characters';

export interface EmbeddedEvidenceOptions {
  /** EVIDENCE_IMAGE_MAX_BYTES. */
  imageLimit?: number;
  /** Starts the service as its process does (HTTP on a free port, consumers, housekeeping). */
  listen?: boolean;
  /** More settings, as the environment names them. */
  env?: Record<string, string>;
}

export async function startEmbeddedEvidence(options: EmbeddedEvidenceOptions = {}): Promise<EmbeddedEvidence> {
  const dir = await mkdtemp(join(tmpdir(), 'evidence-domain-'));
  const env = {
    DATA_DIR: dir,
    INTERNAL_SECRET: TEST_SECRET,
    EVIDENCE_PORT: '0',
    ...(options.imageLimit ? { EVIDENCE_IMAGE_MAX_BYTES: String(options.imageLimit) } : {}),
    ...options.env,
  };
  const logger = pino({ level: 'silent' });
  const infrastructure = infrastructureFromEnv(env);
  const settings = evidenceSettingsFromEnv(env);
  const bus = createEventBus(infrastructure, 'evidence-test', logger);
  const mediaQueues = openMediaQueues((queue) => createJobQueue<MediaJob>(infrastructure, queue, logger));
  const blobs = createBlobStore(infrastructure);
  const handle = await createEvidenceService(settings, {
    bus,
    mediaQueues,
    logger,
    infrastructure,
    blobs,
  });
  const stores = await openEvidenceStores(infrastructure);
  const events: EventEnvelope[] = [];
  const baseUrl = options.listen ? await handle.start() : null;
  if (!options.listen) handle.relay.start();
  const subscription: Subscription = await bus.subscribe({
    groupId: 'evidence-domain-test',
    topics: [TOPICS.evidence, TOPICS.audit],
    handler: async (message) => {
      events.push(message.value);
    },
  });
  let files = 0;
  return {
    dir,
    baseUrl,
    handle,
    stores,
    blobs,
    bus,
    mediaQueues,
    events,
    async blobKeys() {
      const root = join(dir, 'blobs', 'data');
      const entries = await readdir(root, {
        recursive: true,
        withFileTypes: true,
      }).catch(() => []);
      return entries
        .filter((entry) => entry.isFile())
        .map((entry) =>
          join(entry.parentPath, entry.name)
            .slice(root.length + 1)
            .split('\\')
            .join('/'),
        )
        .sort();
    },
    async receivedFile(name, bytes) {
      const path = join(dir, `received-${files++}-${name}`);
      await writeFile(path, bytes);
      return { path };
    },
    async close() {
      await subscription.close();
      await handle.stop();
      await stores.close();
      for (const queue of mediaQueueList(mediaQueues)) await queue.close();
      await bus.close();
      await rm(dir, { recursive: true, force: true });
    },
  };
}

export const participant = (userId: string, overrides: Partial<CallerIdentity> = {}): CallerIdentity => ({
  userId,
  username: `user-${userId}`,
  role: ROLE_USER,
  sessionId: `session-${userId}`,
  videoWatched: true,
  ...overrides,
});

export const administrator = (userId = 'admin-1'): CallerIdentity => participant(userId, { role: ROLE_ADMIN, username: 'admin' });

/** A small real picture (sharp encodes it). */
export function photoBytes(
  colour: { r: number; g: number; b: number } = { r: 200, g: 30, b: 30 },
  format: 'jpeg' | 'png' = 'jpeg',
): Promise<Buffer> {
  return sharp({
    create: { width: 16, height: 16, channels: 3, background: colour },
  })
    [format]()
    .toBuffer();
}

/** A short real WAV recording (PCM, silence): a file of another kind than a photo. */
export function wavBytes(seconds = 0.2): Buffer {
  const rate = 8000;
  const samples = Math.round(rate * seconds);
  const header = Buffer.alloc(44);
  header.write('RIFF', 0);
  header.writeUInt32LE(36 + samples * 2, 4);
  header.write('WAVE', 8);
  header.write('fmt ', 12);
  header.writeUInt32LE(16, 16);
  header.writeUInt16LE(1, 20); // PCM
  header.writeUInt16LE(1, 22); // mono
  header.writeUInt32LE(rate, 24);
  header.writeUInt32LE(rate * 2, 28);
  header.writeUInt16LE(2, 32);
  header.writeUInt16LE(16, 34);
  header.write('data', 36);
  header.writeUInt32LE(samples * 2, 40);
  return Buffer.concat([header, Buffer.alloc(samples * 2)]);
}
