import { describe, expect, it } from 'vitest';
import { READINESS_CHECK_TIMEOUT_MS, runReadinessChecks } from '../src/runtime/health-server.js';

describe('readiness', () => {
  it('is ready while dependencies answer', async () => {
    expect(await runReadinessChecks([{ name: 'bus', check: async () => undefined }], false)).toEqual({ ready: true, body: { status: 'ready', checks: { bus: 'ok' } } });
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
      body: { status: 'degraded', checks: { bus: `no answer within ${READINESS_CHECK_TIMEOUT_MS} ms`, blobs: 'connect ECONNREFUSED', documents: 'ok' } },
    });
  });

  it('is not ready while the process shuts down', async () => {
    expect(await runReadinessChecks([{ name: 'bus', check: async () => undefined }], true)).toMatchObject({ ready: false, body: { status: 'stopping' } });
  });
});
