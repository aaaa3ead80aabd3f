import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pino } from 'pino';
import { afterAll, describe, expect, it } from 'vitest';
import { ServiceMetrics } from '../src/observability/metrics.js';
import { SqliteJobQueue } from '../src/jobs/sqlite-job-queue.js';
import { SqliteEventBus } from '../src/events/sqlite-event-bus.js';
import { createEvent } from '../src/events/envelope.js';

// The metrics an alert reads that the adapters compute at scrape time, on the embedded adapters
// (a real SQLite job queue and bus in a temporary folder): the age of each queue's oldest waiting
// job, and every consumer group's lag in one metric.
const root = mkdtempSync(join(tmpdir(), 'service-metrics-'));
const logger = pino({ level: 'silent' });
const open: { close(): Promise<void> }[] = [];
afterAll(async () => {
  for (const resource of open) await resource.close();
  rmSync(root, { recursive: true, force: true });
});

const sample = (text: string, name: string, labels: string) =>
  new RegExp(`^${name}\\{${labels},service="[a-z-]+"\\} (\\S+)$`, 'm').exec(text)?.[1];

describe('portal_job_oldest_waiting_seconds', () => {
  it('says per queue how long its oldest waiting job has waited, 0 when none waits', async () => {
    const queue = (name: string) => {
      const opened = new SqliteJobQueue<{ n: number }>({ file: join(root, 'jobs.sqlite'), queue: name, logger, pollIntervalMs: 20 });
      open.push(opened);
      return opened;
    };
    const av = queue('media-av');
    const copies = queue('media-av-720p');
    const metrics = new ServiceMetrics('media-worker');
    metrics.watchQueue(av);
    metrics.watchQueue(copies);
    await copies.add('copy', { n: 1 });
    await new Promise((resolve) => setTimeout(resolve, 1_100));
    const text = await metrics.text();
    expect(Number(sample(text, 'portal_job_oldest_waiting_seconds', 'queue="media-av-720p"'))).toBeGreaterThanOrEqual(1);
    expect(sample(text, 'portal_job_oldest_waiting_seconds', 'queue="media-av"')).toBe('0');
    // Depth by state stays per queue, as before.
    expect(sample(text, 'portal_jobs_media_av_720p', 'state="waiting"')).toBe('1');

    const worker = await copies.work(async () => undefined);
    open.push(worker);
    await expect
      .poll(async () => sample(await metrics.text(), 'portal_job_oldest_waiting_seconds', 'queue="media-av-720p"'), { timeout: 5_000 })
      .toBe('0');
  });
});

describe('portal_consumer_lag', () => {
  it('reports every consumer group of a process in one metric, by group and topic', async () => {
    const bus = new SqliteEventBus({ file: join(root, 'bus.sqlite'), logger, pollIntervalMs: 20 });
    open.push(bus);
    const event = (n: number) => ({ key: `k${n}`, value: createEvent({ type: 'thing.happened', key: `k${n}`, data: { n } }) });
    await bus.publish('audit.entries', [event(1), event(2), event(3)]);
    await bus.publish('identity.users', [event(4)]);
    const metrics = new ServiceMetrics('identity');
    metrics.watchConsumerLag(bus, 'identity.audit', ['audit.entries', 'identity.users']);
    metrics.watchConsumerLag(bus, 'identity.other', ['identity.users']);
    let text = await metrics.text();
    expect(sample(text, 'portal_consumer_lag', 'group="identity.audit",topic="audit.entries"')).toBe('3');
    expect(sample(text, 'portal_consumer_lag', 'group="identity.audit",topic="identity.users"')).toBe('1');
    expect(sample(text, 'portal_consumer_lag', 'group="identity.other",topic="identity.users"')).toBe('1');
    expect(text.match(/^# TYPE portal_consumer_lag gauge$/gm)).toHaveLength(1);

    const handled: string[] = [];
    const subscription = await bus.subscribe({
      groupId: 'identity.audit',
      topics: ['audit.entries', 'identity.users'],
      handler: async (message) => void handled.push(message.key),
    });
    open.push(subscription);
    await expect.poll(() => handled.length, { timeout: 5_000 }).toBe(4);
    await expect
      .poll(async () => sample(await metrics.text(), 'portal_consumer_lag', 'group="identity.audit",topic="audit.entries"'), {
        timeout: 5_000,
      })
      .toBe('0');
    text = await metrics.text();
    expect(sample(text, 'portal_consumer_lag', 'group="identity.other",topic="identity.users"')).toBe('1');
  });
});
