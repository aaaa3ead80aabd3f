import { randomUUID } from 'node:crypto';
import { setTimeout as delay } from 'node:timers/promises';
import { afterEach, describe, expect, it } from 'vitest';
import {
  JobFailedForGoodError,
  RetryJobLaterError,
  handedBackTooOftenReason,
  isHandedBackTooOften,
  type JobQueue,
  type JobWorker,
} from '../jobs/job-queue.js';
import { waitFor } from './wait-for.js';
import { currentRequestContext, runWithRequestContext, type RequestContext } from '../context/request-context.js';

export interface JobQueueContractOptions {
  /** A new client of the same queue storage each call; the name keeps tests apart. */
  connect: (queueName: string) => Promise<JobQueue<{ n: number }>>;
  timeoutMs?: number;
  /**
   * Starts, in another process, a worker of the named queue that takes one job and hangs;
   * `started` resolves once it holds the job, `kill` kills the process with SIGKILL.
   */
  startDoomedWorker?: (queueName: string) => Promise<{ started: Promise<void>; kill: () => Promise<void> }>;
}

/** The one contract every job queue adapter must pass. */
export function jobQueueContract(name: string, options: JobQueueContractOptions): void {
  const timeoutMs = options.timeoutMs ?? 10_000;
  describe(`JobQueue contract: ${name}`, () => {
    const queues: JobQueue<{ n: number }>[] = [];
    const workers: JobWorker[] = [];
    const connect = async (queueName = `contract-${randomUUID().slice(0, 8)}`) => {
      const queue = await options.connect(queueName);
      queues.push(queue);
      return queue;
    };
    afterEach(async () => {
      for (const worker of workers.splice(0)) await worker.close();
      for (const queue of queues.splice(0)) await queue.close();
    });

    it('runs a job with its data and keeps the result', async () => {
      const queue = await connect();
      workers.push(await queue.work(async (job) => ({ doubled: job.data.n * 2 })));
      const added = await queue.add('double', { n: 21 }, { jobId: 'job-1' });
      expect(added.id).toBe('job-1');
      const done = await waitFor(
        async () => {
          const job = await queue.getJob('job-1');
          return job?.state === 'completed' ? job : null;
        },
        { timeoutMs, what: 'completion' },
      );
      expect(done.returnValue).toEqual({ doubled: 42 });
      expect(done.attemptsMade).toBe(1);
    });

    it('runs a job in the context of the request that added it (its id, the queue as the caller), and its data without it', async () => {
      const queue = await connect();
      const seen = new Map<number, { context: RequestContext | undefined; data: unknown }>();
      // The worker starts inside a request of its own: the jobs must not see that one.
      const worker = await runWithRequestContext({ requestId: 'worker-start', caller: { kind: 'anonymous' } }, () =>
        queue.work(async (job) => {
          await delay(5);
          seen.set(job.data.n, { context: currentRequestContext(), data: job.data });
        }),
      );
      workers.push(worker);
      await runWithRequestContext({ requestId: 'adding-request', caller: { kind: 'anonymous' } }, () =>
        queue.add('from-request', { n: 1 }),
      );
      await queue.add('from-nowhere', { n: 2 });
      await waitFor(() => seen.size === 2, { timeoutMs, what: 'both jobs' });
      expect(seen.get(1)?.context).toEqual({ requestId: 'adding-request', caller: { kind: 'system', name: queue.name } });
      expect(seen.get(2)?.context).toEqual({ requestId: undefined, caller: { kind: 'system', name: queue.name } });
      expect(seen.get(1)?.data).toEqual({ n: 1 });
      const info = await runWithRequestContext({ requestId: 'adding-request', caller: { kind: 'anonymous' } }, () =>
        queue.add('listed', { n: 3 }, { delay: 60_000 }),
      );
      expect(info.data).toEqual({ n: 3 });
    });

    it('removes the jobs that match, in every state but running, and only those', async () => {
      const queue = await connect();
      await queue.add('first', { n: 1 }, { jobId: 'done-1' });
      workers.push(await queue.work(async (job) => ({ n: job.data.n })));
      await waitFor(async () => (await queue.getJob('done-1'))?.state === 'completed', { timeoutMs, what: 'completion' });
      await workers.pop()!.close();
      await queue.add('later', { n: 1 }, { jobId: 'waiting-1' });
      await queue.add('later', { n: 1 }, { jobId: 'delayed-1', delay: 60_000 });
      await queue.add('later', { n: 2 }, { jobId: 'other-2' });
      expect(await queue.removeJobs((job) => job.data.n === 1)).toBe(3);
      for (const id of ['done-1', 'waiting-1', 'delayed-1']) expect(await queue.getJob(id), id).toBeNull();
      expect((await queue.getJob('other-2'))?.data).toEqual({ n: 2 });
      expect(await queue.removeJobs((job) => job.data.n === 1)).toBe(0);
    });

    it('adds a job only once per job id', async () => {
      const queue = await connect();
      let runs = 0;
      await queue.add('once', { n: 1 }, { jobId: 'same' });
      await queue.add('once', { n: 2 }, { jobId: 'same' });
      workers.push(await queue.work(async () => void runs++));
      await waitFor(async () => (await queue.getJob('same'))?.state === 'completed', { timeoutMs, what: 'completion' });
      await delay(200);
      expect(runs).toBe(1);
      expect((await queue.getJob('same'))!.data).toEqual({ n: 1 });
    });

    it('puts a job off as often as its handler asks, after the delay it names, with no try counted', async () => {
      const queue = await connect();
      const runs: { at: number; attemptsMade: number; postponements: number }[] = [];
      workers.push(
        await queue.work(async (job) => {
          runs.push({ at: Date.now(), attemptsMade: job.attemptsMade, postponements: job.postponements });
          if (runs.length <= 4) throw new RetryJobLaterError(150, 'the mail server is away');
          return 'sent';
        }),
      );
      // Two tries only: the four postponements must use none of them.
      await queue.add('later', { n: 1 }, { jobId: 'put-off', attempts: 2, backoff: { type: 'fixed', delay: 10 } });
      await waitFor(async () => runs.length >= 2 && (await queue.getJob('put-off'))?.state === 'delayed', {
        timeoutMs,
        what: 'the job to wait, delayed',
      });
      const done = await waitFor(
        async () => {
          const job = await queue.getJob('put-off');
          return job?.state === 'completed' ? job : null;
        },
        { timeoutMs, what: 'completion after the postponements' },
      );
      expect(done.returnValue).toBe('sent');
      expect(done.attemptsMade).toBe(1);
      expect(runs.map((run) => [run.attemptsMade, run.postponements])).toEqual([
        [0, 0],
        [0, 1],
        [0, 2],
        [0, 3],
        [0, 4],
      ]);
      for (let i = 1; i < runs.length; i++) expect(runs[i]!.at - runs[i - 1]!.at).toBeGreaterThanOrEqual(140);
    });

    it('fails a job for good at once when its handler says it can never succeed', async () => {
      const queue = await connect();
      let runs = 0;
      workers.push(
        await queue.work(async () => {
          runs++;
          throw new JobFailedForGoodError('the sealed code cannot be opened');
        }),
      );
      await queue.add('doomed', { n: 1 }, { jobId: 'doomed', attempts: 5, backoff: { type: 'fixed', delay: 10 } });
      const failed = await waitFor(
        async () => {
          const job = await queue.getJob('doomed');
          return job?.state === 'failed' ? job : null;
        },
        { timeoutMs, what: 'the job to fail' },
      );
      expect(failed.failedReason).toContain('the sealed code cannot be opened');
      await delay(200);
      expect(runs).toBe(1);
    });

    it('tries again after a failure, with backoff, until it works', async () => {
      const queue = await connect();
      const tries: number[] = [];
      workers.push(
        await queue.work(async () => {
          tries.push(Date.now());
          if (tries.length < 3) throw new Error(`try ${tries.length} failed`);
          return 'ok';
        }),
      );
      await queue.add('flaky', { n: 1 }, { jobId: 'flaky', attempts: 3, backoff: { type: 'fixed', delay: 150 } });
      const done = await waitFor(
        async () => {
          const job = await queue.getJob('flaky');
          return job?.state === 'completed' ? job : null;
        },
        { timeoutMs, what: 'completion after retries' },
      );
      expect(done.attemptsMade).toBe(3);
      expect(tries[1]! - tries[0]!).toBeGreaterThanOrEqual(140);
    });

    it('keeps a job that used up its tries as failed, with the reason', async () => {
      const queue = await connect();
      workers.push(
        await queue.work(async () => {
          throw new Error('the file is broken');
        }),
      );
      await queue.add('doomed', { n: 1 }, { jobId: 'doomed', attempts: 2, backoff: { type: 'fixed', delay: 10 } });
      const failed = await waitFor(
        async () => {
          const job = await queue.getJob('doomed');
          return job?.state === 'failed' ? job : null;
        },
        { timeoutMs, what: 'failure' },
      );
      expect(failed.attemptsMade).toBe(2);
      expect(failed.failedReason).toBe('the file is broken');
      expect((await queue.counts()).failed).toBe(1);
    });

    it('runs no more jobs at once than the concurrency allows', async () => {
      const queue = await connect();
      let running = 0;
      let most = 0;
      let finished = 0;
      workers.push(
        await queue.work(
          async () => {
            running++;
            most = Math.max(most, running);
            await delay(100);
            running--;
            finished++;
          },
          { concurrency: 2 },
        ),
      );
      for (let i = 0; i < 6; i++) await queue.add('slow', { n: i });
      await waitFor(() => finished === 6, { timeoutMs, what: 'six jobs' });
      expect(most).toBe(2);
    });

    it("takes only its own queue's jobs, from a storage that holds other queues", async () => {
      const mine = await connect();
      const other = await connect();
      await other.add('elsewhere', { n: 1 }, { jobId: 'elsewhere' });
      const seen: number[] = [];
      workers.push(await mine.work(async (job) => void seen.push(job.data.n)));
      await mine.add('here', { n: 2 }, { jobId: 'here' });
      await waitFor(async () => (await mine.getJob('here'))?.state === 'completed', { timeoutMs, what: 'the own job' });
      await delay(300);
      expect(seen).toEqual([2]);
      expect((await other.getJob('elsewhere'))!.state).toBe('waiting');
      expect(await mine.getJob('elsewhere')).toBeNull();
    });

    it("runs a queue's job at once while another queue's worker is busy with long jobs, each at its own concurrency", async () => {
      // Two queues side by side, as the media worker runs stills and audio/video: the long jobs of
      // one fill its single slot and wait in line, and a job of the other does not wait for them.
      const long = await connect();
      const short = await connect();
      let longRunning = 0;
      let longMost = 0;
      let release!: () => void;
      const gate = new Promise<void>((resolve) => (release = resolve));
      workers.push(
        await long.work(
          async () => {
            longRunning++;
            longMost = Math.max(longMost, longRunning);
            await gate;
            longRunning--;
          },
          { concurrency: 1 },
        ),
      );
      let shortRunning = 0;
      let shortMost = 0;
      workers.push(
        await short.work(
          async (job) => {
            shortRunning++;
            shortMost = Math.max(shortMost, shortRunning);
            await delay(150);
            shortRunning--;
            return job.data.n;
          },
          { concurrency: 2 },
        ),
      );
      for (let i = 0; i < 3; i++) await long.add('long', { n: i }, { jobId: `long-${i}` });
      await waitFor(() => longRunning === 1, { timeoutMs, what: 'a long job to start' });
      for (let i = 0; i < 4; i++) await short.add('short', { n: i }, { jobId: `short-${i}` });
      await waitFor(async () => (await short.counts()).completed === 4, { timeoutMs, what: 'the short jobs, beside the long ones' });
      // The long queue has not moved on meanwhile: its first job still runs, the others wait.
      expect(await long.counts()).toMatchObject({ active: 1, waiting: 2, completed: 0 });
      expect(shortMost).toBe(2);
      release();
      await waitFor(async () => (await long.counts()).completed === 3, { timeoutMs, what: 'the long jobs' });
      expect(longMost).toBe(1);
    });

    it('keeps jobs added while no worker runs, across a restart', async () => {
      const queueName = `contract-${randomUUID().slice(0, 8)}`;
      const first = await connect(queueName);
      await first.add('later', { n: 5 }, { jobId: 'later' });
      await first.close();
      queues.splice(queues.indexOf(first), 1);
      const second = await connect(queueName);
      const seen: number[] = [];
      workers.push(await second.work(async (job) => void seen.push(job.data.n)));
      await waitFor(() => seen.length === 1, { timeoutMs, what: 'the job from before the restart' });
      expect(seen).toEqual([5]);
    });

    it('runs the jobs that waited in the order they were added, one at a time at a concurrency of one', async () => {
      const queue = await connect();
      const added = Array.from({ length: 30 }, (_, n) => n);
      for (const n of added) await queue.add('in-turn', { n }, { jobId: `turn-${n}` });
      const seen: number[] = [];
      workers.push(await queue.work(async (job) => void seen.push(job.data.n), { concurrency: 1 }));
      await waitFor(() => seen.length === added.length, { timeoutMs, what: 'every job' });
      expect(seen).toEqual(added);
    });

    it.skipIf(!options.startDoomedWorker)('gives the job of a worker that was killed to another worker once its lock expires', async () => {
      const queueName = `contract-${randomUUID().slice(0, 8)}`;
      const queue = await connect(queueName);
      // A worker in another process takes the job and is killed (SIGKILL) while it works on it.
      const doomed = await options.startDoomedWorker!(queueName);
      await queue.add('orphan', { n: 9 }, { jobId: 'orphan' });
      await doomed.started;
      await doomed.kill();
      expect((await queue.getJob('orphan'))!.state).toBe('active');
      const done: number[] = [];
      workers.push(await queue.work(async (job) => void done.push(job.data.n), { lockDurationMs: 500 }));
      await waitFor(() => done.length === 1, { timeoutMs: Math.max(timeoutMs, 15_000), what: 'the stalled job to be taken over' });
      expect(done).toEqual([9]);
    });

    it('says since when its oldest waiting job has been due: a delayed job from its time on, and nothing once none waits', async () => {
      const queue = await connect();
      expect(await queue.oldestWaitingSince()).toBeNull();
      const before = Date.now();
      await queue.add('first', { n: 1 });
      const after = Date.now();
      await delay(30);
      await queue.add('second', { n: 2 });
      await queue.add('tomorrow', { n: 3 }, { delay: 86_400_000 });
      const since = await queue.oldestWaitingSince();
      expect(since).toBeGreaterThanOrEqual(before);
      expect(since).toBeLessThanOrEqual(after);
      // A delayed job alone is not waiting until its time; once due, it counts from then.
      const soon = await connect();
      const added = Date.now();
      await soon.add('soon', { n: 4 }, { delay: 300 });
      expect(await soon.oldestWaitingSince()).toBeNull();
      const due = await waitFor(() => soon.oldestWaitingSince(), { timeoutMs, what: 'the delayed job to be due' });
      expect(due).toBeGreaterThanOrEqual(added + 300);
      expect(due).toBeLessThanOrEqual(Date.now());
      const done: number[] = [];
      workers.push(await queue.work(async (job) => void done.push(job.data.n)));
      await waitFor(() => done.length === 2, { timeoutMs, what: 'both jobs' });
      await waitFor(async () => (await queue.oldestWaitingSince()) === null, { timeoutMs, what: 'no job to be waiting' });
    });

    it('does not start a delayed job early', async () => {
      const queue = await connect();
      const started: number[] = [];
      const added = Date.now();
      workers.push(await queue.work(async () => void started.push(Date.now())));
      await queue.add('later', { n: 1 }, { delay: 400 });
      await waitFor(() => started.length === 1, { timeoutMs, what: 'the delayed job' });
      expect(started[0]! - added).toBeGreaterThanOrEqual(380);
    });

    it('runs each delayed job once, when two producers add it under one id and two consumers share the store (reminders)', async () => {
      const name = `contract-${randomUUID().slice(0, 8)}`;
      const [one, two] = [await connect(name), await connect(name)];
      const runs: string[] = [];
      for (const queue of [one, two]) {
        workers.push(
          await queue.work(
            async (job) => {
              runs.push(job.id);
              await delay(20);
            },
            { concurrency: 3 },
          ),
        );
      }
      const ids = Array.from({ length: 12 }, (_, index) => `reminder-${index}`);
      await Promise.all(
        ids.flatMap((id, index) =>
          [one, two].map((queue) => queue.add('remind', { n: index }, { jobId: id, delay: 200 + (index % 3) * 50 })),
        ),
      );
      await waitFor(() => runs.length >= ids.length, { timeoutMs, what: 'every delayed job' });
      await delay(600);
      expect([...runs].sort()).toEqual([...ids].sort());
    });

    it('hands the running jobs back on request: waiting again, no try counted, then done by another worker', async () => {
      const queue = await connect();
      const stuck = await queue.work(() => new Promise(() => undefined));
      await queue.add('long', { n: 5 }, { jobId: 'long', attempts: 2 });
      await waitFor(async () => (await queue.getJob('long'))?.state === 'active', { timeoutMs, what: 'the job to start' });
      expect(await stuck.handBack()).toEqual(['long']);
      expect(await queue.getJob('long')).toMatchObject({ state: 'waiting', attemptsMade: 0 });
      workers.push(await queue.work(async (job) => ({ n: job.data.n })));
      const done = await waitFor(
        async () => {
          const job = await queue.getJob('long');
          return job?.state === 'completed' ? job : null;
        },
        { timeoutMs, what: 'the job done by the next worker' },
      );
      expect(done).toMatchObject({ returnValue: { n: 5 }, attemptsMade: 1 });
    });

    it('counts a try for each hand-back after the free ones, and fails a job handed back too often with a clear reason', async () => {
      // A job longer than every shutdown grace period: each worker that takes it is stopped and
      // hands it back. Two hand-backs are free; each one after uses a try; with 2 tries the fourth
      // hand-back ends it failed, not waiting again for ever.
      const queue = await connect();
      // A minute's backoff: a counted hand-back does not wait for it (the job did nothing wrong).
      await queue.add('endless', { n: 7 }, { jobId: 'endless', attempts: 2, backoff: { type: 'fixed', delay: 60_000 } });
      const seen: { state: string; attemptsMade: number }[] = [];
      for (let handBack = 1; handBack <= 4; handBack++) {
        const interrupted = await queue.work(() => new Promise(() => undefined), { freeHandBacks: 2 });
        await waitFor(async () => (await queue.getJob('endless'))?.state === 'active', {
          timeoutMs,
          what: `the job to start (${handBack})`,
        });
        expect(await interrupted.handBack()).toEqual(['endless']);
        const job = (await queue.getJob('endless'))!;
        seen.push({ state: job.state, attemptsMade: job.attemptsMade });
      }
      expect(seen).toEqual([
        { state: 'waiting', attemptsMade: 0 },
        { state: 'waiting', attemptsMade: 0 },
        { state: 'waiting', attemptsMade: 1 },
        { state: 'failed', attemptsMade: 2 },
      ]);
      const failed = (await queue.getJob('endless'))!;
      expect(isHandedBackTooOften(failed.failedReason)).toBe(true);
      expect(failed.failedReason).toBe(handedBackTooOftenReason(4));
      expect(isHandedBackTooOften('the file is broken')).toBe(false);
      expect(await queue.counts()).toMatchObject({ failed: 1, waiting: 0, active: 0, delayed: 0 });
    });

    it('reports progress while a job runs', async () => {
      const queue = await connect();
      let release!: () => void;
      const gate = new Promise<void>((resolve) => (release = resolve));
      workers.push(
        await queue.work(async (job) => {
          await job.updateProgress(40);
          await gate;
        }),
      );
      await queue.add('progressive', { n: 1 }, { jobId: 'progressive' });
      await waitFor(async () => (await queue.getJob('progressive'))?.progress === 40, { timeoutMs, what: 'progress 40' });
      expect((await queue.getJob('progressive'))!.state).toBe('active');
      release();
    });
  });
}
