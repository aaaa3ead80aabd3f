import { createHash } from 'node:crypto';
import type { ApiClient } from './api-client.js';
import { startPortalProcess, type PortalProcess } from './portal-process.js';

/** What crash tests share: the portal as a process to kill, and a few small helpers. */

export const sha256 = (bytes: Buffer | Uint8Array) => createHash('sha256').update(bytes).digest('hex');

/** The Cookie header of a client's session, for requests sent without the client. */
export const cookieOf = (client: ApiClient) => [...client.cookies].map(([name, value]) => `${name}=${value}`).join('; ');

/**
 * Files under DATA_DIR that a process writes while it works and that are garbage once it is dead:
 * blob writes in progress, received multipart files of evidence and identity.
 */
export const isTemporary = (path: string) =>
  path.startsWith('blobs/tmp/') || path.startsWith('tmp/evidence-uploads/') || path.startsWith('tmp/identity-uploads/');

/** Portal processes started by a test file, all killed by `killAll` (in its afterAll). */
export function portalProcesses() {
  const children: PortalProcess[] = [];
  return {
    async start(dataDir: string, env: Record<string, string> = {}): Promise<PortalProcess> {
      const child = await startPortalProcess(dataDir, env);
      children.push(child);
      return child;
    },
    async killAll(): Promise<void> {
      for (const child of children) await child.kill();
    },
  };
}
