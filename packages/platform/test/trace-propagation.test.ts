import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { trace } from '@opentelemetry/api';
import { InMemorySpanExporter, NodeTracerProvider, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-node';
import { pino } from 'pino';
import { afterAll, describe, expect, it } from 'vitest';
import { SqliteEventBus, SqliteJobQueue, createEvent } from '../src/index.js';
import { waitFor } from '../src/testing/index.js';

// A real tracer provider whose spans are kept in memory (the SDK's own test exporter).
const exporter = new InMemorySpanExporter();
const provider = new NodeTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] });
provider.register();
const tracer = trace.getTracer('test');
const root = mkdtempSync(join(tmpdir(), 'portal-trace-'));
const silent = pino({ level: 'silent' });
afterAll(async () => {
  await provider.shutdown();
  rmSync(root, { recursive: true, force: true });
});

describe('trace context', () => {
  it('follows an event from the request that made it to the consumer that handles it', async () => {
    const bus = new SqliteEventBus({ file: join(root, 'bus.sqlite'), logger: silent, pollIntervalMs: 20 });
    const handled: string[] = [];
    const subscription = await bus.subscribe({
      groupId: 'tracing',
      topics: ['traced.topic'],
      handler: async () => void handled.push(trace.getActiveSpan()?.spanContext().traceId ?? 'none'),
    });
    const requestTrace = await tracer.startActiveSpan('POST /api/something', async (span) => {
      // As a service does: the event is made inside the request, published later by the relay.
      const event = createEvent({ type: 'thing.happened', key: 'k', data: {} });
      span.end();
      await bus.publish('traced.topic', [{ key: 'k', value: event }]);
      return span.spanContext().traceId;
    });
    await waitFor(() => handled.length === 1, { what: 'the event' });
    expect(handled[0]).toBe(requestTrace);
    const consumer = exporter.getFinishedSpans().find((span) => span.name === 'traced.topic process')!;
    expect(consumer.spanContext().traceId).toBe(requestTrace);
    await subscription.close();
    await bus.close();
  });

  it('follows a job from the request that added it to the worker that runs it', async () => {
    const queue = new SqliteJobQueue<{ n: number }>({
      file: join(root, 'jobs.sqlite'),
      queue: 'traced',
      logger: silent,
      pollIntervalMs: 20,
    });
    const seen: string[] = [];
    const worker = await queue.work(async () => void seen.push(trace.getActiveSpan()?.spanContext().traceId ?? 'none'));
    const requestTrace = await tracer.startActiveSpan('POST /api/evidence', async (span) => {
      await queue.add('work', { n: 1 });
      span.end();
      return span.spanContext().traceId;
    });
    await waitFor(() => seen.length === 1, { what: 'the job' });
    expect(seen[0]).toBe(requestTrace);
    await worker.close();
    await queue.close();
  });
});
