import { once } from 'node:events';
import { request } from 'node:http';
import { fileURLToPath } from 'node:url';
import { setTimeout as delay } from 'node:timers/promises';
import { runTypeScript, type ScriptProcess } from '@portal/platform/testing';
import { TEST_ADMIN } from './portal.js';

export interface PortalProcess {
  url: string;
  dataDir: string;
  process: ScriptProcess;
  /** SIGKILL: a crash, no shutdown at all. */
  kill(): Promise<void>;
  /** SIGTERM: the graceful stop of a deployment. */
  stop(): Promise<void>;
}

const MAIN = fileURLToPath(new URL('../../packages/all-in-one/src/main.ts', import.meta.url));

/**
 * The all-in-one portal as a real child process on a data folder (from its TypeScript sources),
 * for tests that kill it mid-work and start it again on the same data.
 */
export async function startPortalProcess(dataDir: string, env: Record<string, string> = {}): Promise<PortalProcess> {
  const child = runTypeScript(MAIN, [], {
    DATA_DIR: dataDir,
    HOST: '127.0.0.1',
    PORT: '0',
    RATE_LIMIT_PER_MINUTE: '0',
    AUTH_RATE_LIMITS: 'false',
    LOG_LEVEL: 'info',
    ADMIN_USERNAME: TEST_ADMIN.username,
    ADMIN_EMAIL: TEST_ADMIN.email,
    ADMIN_PASSWORD: TEST_ADMIN.password,
    ...env,
  });
  const ready = await child.waitForLine(/portal ready/, 90_000);
  return {
    url: JSON.parse(ready).url as string,
    dataDir,
    process: child,
    kill: () => child.kill(),
    async stop() {
      if (child.child.exitCode !== null || child.child.signalCode !== null) return;
      const exited = once(child.child, 'exit');
      child.child.kill('SIGTERM');
      await exited;
    },
  };
}

export interface PlainAnswer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  text: string;
}

/**
 * An HTTP request whose body goes out in pieces at about the pace of a phone on a good mobile
 * connection, so that a crash of the server finds uploads in the middle of their transfer.
 * Rejects when the connection breaks before the answer is complete.
 */
export function pacedRequest(
  url: string,
  method: string,
  headers: Record<string, string>,
  body: Buffer,
  {
    chunkBytes = 64 * 1024,
    bytesPerSecond = 256 * 1024,
    onSent,
  }: { chunkBytes?: number; bytesPerSecond?: number; onSent?: () => void } = {},
): Promise<PlainAnswer> {
  return new Promise((resolve, reject) => {
    const req = request(url, { method, headers: { ...headers, 'content-length': String(body.length) } }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, text: Buffer.concat(chunks).toString('utf8') }));
      res.on('error', reject);
      res.on('aborted', () => reject(new Error('the answer was cut off')));
    });
    req.on('error', reject);
    void (async () => {
      for (let offset = 0; offset < body.length && !req.destroyed; offset += chunkBytes) {
        if (!req.write(body.subarray(offset, offset + chunkBytes))) await once(req, 'drain').catch(() => undefined);
        // The pace of the sender (not a wait for the server): bytes per second on the radio.
        await delay((chunkBytes / bytesPerSecond) * 1000);
      }
      req.end(() => onSent?.());
    })().catch(reject);
  });
}
