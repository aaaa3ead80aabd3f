import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createLogger } from '@portal/platform';
import { startAllInOne, type AllInOneOptions, type RunningPortal } from '@portal/all-in-one';
import { startDistributedPortal } from './distributed-portal.js';

export const TEST_ADMIN = { username: 'overseer', email: 'overseer@example.org', password: 'overseer-pass-1' } as const;

/**
 * For the files about media mechanics (transcoding, crashes mid-job, hostile files, queues): their
 * videos would cost the face check's CPU (4 detections a second of video) without proving anything
 * about faces. Every other portal checks faces as the product does by default (FACE_BLUR=auto);
 * tests/integration/faces.test.ts, tests/e2e/faces.test.ts and the distributed suite prove it.
 */
export const NO_FACE_CHECK = { FACE_BLUR: 'off' } as const;

export interface TestPortal extends RunningPortal {
  /** Stops the portal and removes its data folder. */
  dispose(): Promise<void>;
}

/**
 * A whole portal (all-in-one mode) on a free port with its data in a fresh temporary folder:
 * real SQLite files, real blobs on disk, the real event bus. Logs are silent unless
 * PORTAL_TEST_LOGS=1.
 */
export async function startTestPortal(
  env: Record<string, string> = {},
  dataDir?: string,
  options: AllInOneOptions = {},
): Promise<TestPortal> {
  if (process.env.PORTAL_TEST_MODE === 'distributed') {
    // The same tests against the five services as separate processes on real servers.
    const portal = await startDistributedPortal({
      RATE_LIMIT_PER_MINUTE: '0',
      AUTH_RATE_LIMITS: 'false',
      ADMIN_USERNAME: TEST_ADMIN.username,
      ADMIN_EMAIL: TEST_ADMIN.email,
      ADMIN_PASSWORD: TEST_ADMIN.password,
      ...env,
    });
    return { url: portal.url, dataDir: portal.dataDir, stop: portal.stop, dispose: portal.dispose };
  }
  const dir = dataDir ?? mkdtempSync(join(tmpdir(), 'portal-test-'));
  const level = process.env.PORTAL_TEST_LOGS ? 'debug' : 'silent';
  const portal = await startAllInOne(
    {
      DATA_DIR: dir,
      HOST: '127.0.0.1',
      PORT: '0',
      RATE_LIMIT_PER_MINUTE: '0',
      AUTH_RATE_LIMITS: 'false',
      ADMIN_USERNAME: TEST_ADMIN.username,
      ADMIN_EMAIL: TEST_ADMIN.email,
      ADMIN_PASSWORD: TEST_ADMIN.password,
      PRODUCT_NAME: 'Operation Test',
      ...env,
    },
    // The production logger (its redaction included), silent unless asked for.
    (service) => createLogger({ service, level }),
    options,
  );
  return {
    ...portal,
    async dispose() {
      await portal.stop();
      if (!dataDir) rmSync(dir, { recursive: true, force: true });
    },
  };
}
