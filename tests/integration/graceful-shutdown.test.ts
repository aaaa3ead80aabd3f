import { once } from 'node:events';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { pino } from 'pino';
import { SqliteJobQueue, shutdownGraceMsFromEnv, finishJobsWithinMs, DEFAULT_SHUTDOWN_GRACE_MS } from '@portal/platform';
import { runTypeScript } from '@portal/platform/testing';

// SIGTERM while a job runs: the process finishes the job within SHUTDOWN_GRACE_MS (which a
// deployment sets from terminationGracePeriodSeconds) and takes no new one; a job longer than the
// grace period is handed back to the queue before the end (waiting, no try counted), so a rollout
// does not use up a long video's tries. The durations are small here; the old code cut every job
// off after a fixed 20 s, whatever the grace period, and left it to expire as after a crash.
const FIXTURE = fileURLToPath(new URL('./fixtures/draining-worker.ts', import.meta.url));
const dirs: string[] = [];
afterAll(() => dirs.forEach((dir) => rmSync(dir, { recursive: true, force: true })));

async function workerWithJobs(env: Record<string, string>) {
  const dataDir = mkdtempSync(join(tmpdir(), 'portal-shutdown-'));
  dirs.push(dataDir);
  const queue = new SqliteJobQueue<{ n: number }>({
    file: join(dataDir, 'jobs.sqlite'),
    queue: 'media',
    logger: pino({ level: 'silent' }),
  });
  await queue.add('first', { n: 1 }, { jobId: 'first' });
  await queue.add('second', { n: 2 }, { jobId: 'second' });
  const worker = runTypeScript(FIXTURE, [], { DATA_DIR: dataDir, LOG_LEVEL: 'warn', ...env });
  await worker.waitForLine(/^ready$/, 30_000);
  await worker.waitForLine(/^started first$/, 30_000);
  const started = Date.now();
  const exited = once(worker.child, 'exit') as Promise<[number | null]>;
  worker.child.kill('SIGTERM');
  const [code] = await exited;
  return { queue, code, stoppedAfterMs: Date.now() - started };
}

describe('graceful shutdown', () => {
  it("reads the grace period from SHUTDOWN_GRACE_MS, with a default below Kubernetes' 30 s", () => {
    expect(shutdownGraceMsFromEnv({ SHUTDOWN_GRACE_MS: '295000' })).toBe(295_000);
    expect(shutdownGraceMsFromEnv({})).toBe(DEFAULT_SHUTDOWN_GRACE_MS);
    expect(() => shutdownGraceMsFromEnv({ SHUTDOWN_GRACE_MS: 'soon' })).toThrow(/SHUTDOWN_GRACE_MS/);
  });

  it('finishes the running job after SIGTERM when it ends within the grace period, and takes no new one', async () => {
    const { queue, code, stoppedAfterMs } = await workerWithJobs({ JOB_MS: '2500', SHUTDOWN_GRACE_MS: '8000' });
    expect(code).toBe(0);
    expect(stoppedAfterMs).toBeGreaterThanOrEqual(1500);
    expect(await queue.getJob('first')).toMatchObject({ state: 'completed', returnValue: { n: 1 } });
    expect(await queue.getJob('second')).toMatchObject({ state: 'waiting', attemptsMade: 0 });
    await queue.close();
  }, 60_000);

  it('hands a job longer than the grace period back to the queue before the period ends, no try counted', async () => {
    const { queue, code, stoppedAfterMs } = await workerWithJobs({ JOB_MS: '20000', SHUTDOWN_GRACE_MS: '1500' });
    expect(code).toBe(0);
    expect(stoppedAfterMs).toBeLessThan(10_000);
    expect(await queue.getJob('first')).toMatchObject({ state: 'waiting', attemptsMade: 0 });
    expect(await queue.getJob('second')).toMatchObject({ state: 'waiting', attemptsMade: 0 });
    await queue.close();
  }, 60_000);

  it('leaves a margin for handing back and closing', () => {
    expect(finishJobsWithinMs(295_000)).toBe(290_000);
    expect(finishJobsWithinMs(1_500)).toBe(1_200);
    expect(finishJobsWithinMs(0)).toBe(0);
  });
});
