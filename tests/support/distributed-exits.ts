// The distributed suite's global set-up (vitest.distributed.config.ts): a folder where each file's
// portal, once disposed, names the processes it told to stop (a file per process id), and a
// teardown that waits for every one of them to be gone.
//
// A service's graceful stop takes about five seconds (Kafka's consumers finish their long poll
// before they leave their groups). A file's dispose() sends the signal and returns, so the next
// file's portal starts while the last one stops; that the processes did stop is still proven, here,
// at the end of the run: one that outlives the grace below is killed and fails the run.
import type { ChildProcess } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import type { TestProject } from 'vitest/node';

declare module 'vitest' {
  export interface ProvidedContext {
    /** Where disposed portals name their processes that are stopping (tests/support/distributed-exits.ts). */
    stoppingProcessesDir: string;
  }
}

/**
 * Longer than a service's own limit on its graceful stop (SHUTDOWN_GRACE_MS, 25 s by default),
 * after which it exits by itself: a process still running here is stuck, not slow.
 */
const GRACE_MS = 35_000;

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/** Names a process told to stop in `dir` until it exits (what a disposed portal does). */
export function markStopping(dir: string, service: string, child: ChildProcess): Promise<void> {
  const named = join(dir, String(child.pid));
  writeFileSync(named, service);
  return new Promise((done) =>
    child.once('exit', () => {
      rmSync(named, { force: true });
      done();
    }),
  );
}

/**
 * A folder for markStopping(), and the wait for its processes: resolves once none is alive;
 * after graceMs, kills those left and rejects with their names.
 */
export function stoppingProcesses(graceMs = GRACE_MS): { dir: string; teardown(): Promise<void> } {
  const dir = mkdtempSync(join(tmpdir(), 'portal-stopping-'));
  return {
    dir,
    async teardown() {
      const deadline = Date.now() + graceMs;
      const remaining = () => readdirSync(dir).filter((name) => alive(Number(name)));
      while (remaining().length > 0 && Date.now() < deadline) await delay(100);
      const stuck = remaining().map((pid) => ({ pid: Number(pid), service: readFileSync(join(dir, pid), 'utf8') }));
      for (const { pid } of stuck) process.kill(pid, 'SIGKILL');
      rmSync(dir, { recursive: true, force: true });
      if (stuck.length > 0) {
        const names = stuck.map(({ service, pid }) => `${service} (${pid})`).join(', ');
        throw new Error(`still running ${graceMs / 1000} s after SIGTERM, killed: ${names}`);
      }
    },
  };
}

export default function setup(project: TestProject) {
  const { dir, teardown } = stoppingProcesses();
  project.provide('stoppingProcessesDir', dir);
  return teardown;
}
