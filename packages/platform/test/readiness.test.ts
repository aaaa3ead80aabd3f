import { describe, expect, it } from 'vitest';
import { READINESS_CHECK_TIMEOUT_MS, runReadinessChecks } from '../src/runtime/health-server.js';

describe('readiness', () => {
  it('is ready while dependencies answer', async () => {
    expect(await runReadinessChecks([{ name: 'bus', check: async () => undefined }], false)).toEqual({
      ready: true,
      body: { status: 'ready', checks: { bus: 'ok' } },
    });
  });

  it('stays ready, degraded, when a dependency fails or does not answer in time, and names it', async () => {
    const started = Date.now();
    const answer = await runReadinessChecks(
      [
        { name: 'bus', check: () => new Promise(() => undefined) },
        { name: 'blobs', check: async () => Promise.reject(new Error('connect ECONNREFUSED')) },
        { name: 'documents', check: async () => undefined },
      ],
      false,
    );
    expect(Date.now() - started).toBeLessThan(READINESS_CHECK_TIMEOUT_MS + 500);
    expect(answer).toEqual({
      ready: true,
      body: {
        status: 'degraded',
        checks: { bus: `no answer within ${READINESS_CHECK_TIMEOUT_MS} ms`, blobs: 'connect ECONNREFUSED', documents: 'ok' },
      },
    });
  });

  it('is not ready while the process shuts down', async () => {
    expect(await runReadinessChecks([{ name: 'bus', check: async () => undefined }], true)).toMatchObject({
      ready: false,
      body: { status: 'stopping' },
    });
  });
});

describe('portal_dependency_up', () => {
  it('says per dependency whether it answered the readiness check, asked when Prometheus scrapes', async () => {
    const { ServiceMetrics } = await import('../src/observability/metrics.js');
    const metrics = new ServiceMetrics('evidence');
    let blobsUp = true;
    metrics.watchDependencies([
      { name: 'bus', check: async () => undefined },
      { name: 'blobs', check: async () => (blobsUp ? undefined : Promise.reject(new Error('connect ECONNREFUSED'))) },
    ]);
    metrics.watchDependencies([{ name: 'jobs', check: () => new Promise(() => undefined) }]);
    const up = (text: string, dependency: string) =>
      new RegExp(`portal_dependency_up\\{dependency="${dependency}",service="evidence"\\} (\\d)`).exec(text)?.[1];
    let text = await metrics.text();
    expect([up(text, 'bus'), up(text, 'blobs'), up(text, 'jobs')]).toEqual(['1', '1', '0']);
    blobsUp = false;
    text = await metrics.text();
    expect([up(text, 'bus'), up(text, 'blobs'), up(text, 'jobs')]).toEqual(['1', '0', '0']);
  });
});
