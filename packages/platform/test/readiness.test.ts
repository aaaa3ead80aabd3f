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

describe('start-up and consumers in readiness and metrics', () => {
  it('is not ready while starting, and says what start-up waits for', async () => {
    const { StartupGate } = await import('../src/runtime/startup.js');
    const gate = new StartupGate();
    gate.waitingFor('waiting for mongodb: connect ECONNREFUSED 127.0.0.1:27017');
    const checks = [gate.check, { name: 'bus', check: async () => undefined }];
    expect(await runReadinessChecks(checks, false)).toEqual({
      ready: false,
      body: { status: 'starting', checks: { start: 'waiting for mongodb: connect ECONNREFUSED 127.0.0.1:27017', bus: 'ok' } },
    });
    gate.started();
    expect(await runReadinessChecks(checks, false)).toMatchObject({ ready: true, body: { status: 'ready' } });
  });

  it('a consumer holding its messages makes the process degraded, says what it waits for, and shows in the metrics', async () => {
    const { ConsumerStates, consumerChecks } = await import('../src/events/consumer-policy.js');
    const { ServiceMetrics } = await import('../src/observability/metrics.js');
    const states = new ConsumerStates();
    const audit = states.register('identity.audit', ['audit.entries', 'identity.users']);
    states.register('other.group', ['elsewhere']).hold('elsewhere', 'redis', 'not mine');
    const checks = consumerChecks(() => states.list(), ['identity.audit']);
    const metrics = new ServiceMetrics('identity');
    metrics.watchConsumers({ consumerStates: () => states.list() }, ['identity.audit']);
    expect(await runReadinessChecks(checks, false)).toEqual({
      ready: true,
      body: { status: 'ready', checks: { 'consumer identity.audit': 'ok' } },
    });

    audit.hold('audit.entries', 'mongodb', 'MongoServerSelectionError: connect ECONNREFUSED');
    audit.hold('audit.entries', 'mongodb', 'MongoServerSelectionError: connect ECONNREFUSED');
    const held = await runReadinessChecks(checks, false);
    expect(held.ready).toBe(true);
    expect(held.body.status).toBe('degraded');
    expect(held.body.checks['consumer identity.audit']).toMatch(
      /^paused on audit\.entries: waiting for mongodb since \d{4}-.*\(MongoServerSelectionError: connect ECONNREFUSED\)$/,
    );
    let text = await metrics.text();
    expect(text).toContain('portal_consumer_paused{group="identity.audit",topic="audit.entries",service="identity"} 1');
    expect(text).toContain('portal_consumer_paused{group="identity.audit",topic="identity.users",service="identity"} 0');
    expect(text).toContain('portal_consumer_hold_retries_total{group="identity.audit",topic="audit.entries",service="identity"} 2');
    expect(text).toContain('portal_event_dead_letters_total{topic="identity.users",group="identity.audit",service="identity"} 0');
    expect(text).not.toContain('other.group');

    audit.release('audit.entries');
    audit.deadLettered('identity.users');
    text = await metrics.text();
    expect(text).toContain('portal_consumer_paused{group="identity.audit",topic="audit.entries",service="identity"} 0');
    expect(text).toContain('portal_event_dead_letters_total{topic="identity.users",group="identity.audit",service="identity"} 1');
    audit.subscribing('KafkaJSConnectionError: Connection error: connect ECONNREFUSED');
    expect((await runReadinessChecks(checks, false)).body.checks['consumer identity.audit']).toMatch(
      /^not subscribed yet: waiting for kafka since .*KafkaJSConnectionError/,
    );
  });
});
