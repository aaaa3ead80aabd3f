import { EventEmitter, once } from 'node:events';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Readable, Transform, Writable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { setTimeout as delay } from 'node:timers/promises';
import express from 'express';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  currentRequestContext,
  currentRequestId,
  httpRequestContext,
  outsideRequestContext,
  runInHttpRequestContext,
  runWithRequestContext,
  type RequestContext,
} from '../src/context/request-context.js';
import { callerIdentity, errorHandler, requestContext, requestLogging, route } from '../src/http/express-kit.js';
import { IDENTITY_HEADER, IdentityTokens } from '../src/http/caller-identity.js';
import { createLogger } from '../src/logging/logger.js';
import { createEvent } from '../src/events/envelope.js';
import { auditEvent } from '../src/events/audit-event.js';

// The request context (context/request-context.ts): what code running for a request (or an event,
// a job) asks instead of having the request id passed down. These tests hold its promise: runs
// nest, concurrent requests never see each other's context whatever they await, schedule or
// stream, and code outside any run sees none.

const context = (requestId: string): RequestContext => ({ requestId, caller: { kind: 'anonymous' } });

describe('runWithRequestContext', () => {
  it('is seen by what the work calls, and not outside it', () => {
    expect(currentRequestContext()).toBeUndefined();
    const seen = runWithRequestContext(context('a'), () => currentRequestId());
    expect(seen).toBe('a');
    expect(currentRequestId()).toBeUndefined();
  });

  it('nests: the inner run wins until it returns, then the outer one is back', async () => {
    const seen: (string | undefined)[] = [];
    await runWithRequestContext(context('outer'), async () => {
      seen.push(currentRequestId());
      await runWithRequestContext(context('inner'), async () => {
        await delay(1);
        seen.push(currentRequestId());
      });
      seen.push(currentRequestId());
      outsideRequestContext(() => seen.push(currentRequestId()));
      seen.push(currentRequestId());
    });
    expect(seen).toEqual(['outer', 'inner', 'outer', undefined, 'outer']);
  });

  it('keeps concurrent runs apart across awaits, timers, immediates, emitters and stream callbacks', async () => {
    // Each run starts, then yields while the other starts: a module-level "current request" would
    // be the last one started by the time either resumes.
    const started: string[] = [];
    let bothStartedNow: () => void = () => undefined;
    const bothStarted = new Promise<void>((resolve) => (bothStartedNow = resolve));
    const flow = (id: string) =>
      runWithRequestContext(context(id), async () => {
        const seen: (string | undefined)[] = [];
        started.push(id);
        if (started.length === 2) bothStartedNow();
        await bothStarted;
        seen.push(currentRequestId());
        await delay(id === 'first' ? 20 : 1);
        seen.push(currentRequestId());
        seen.push(
          await new Promise<string | undefined>((resolve) => setTimeout(() => resolve(currentRequestId()), id === 'first' ? 1 : 15)),
        );
        seen.push(await new Promise<string | undefined>((resolve) => setImmediate(() => resolve(currentRequestId()))));
        const emitter = new EventEmitter();
        const heard = new Promise<string | undefined>((resolve) => emitter.once('ping', () => resolve(currentRequestId())));
        setTimeout(() => emitter.emit('ping'), 3);
        seen.push(await heard);
        // A stream made and driven inside the run: its callbacks run for that run.
        const chunks: (string | undefined)[] = [];
        await pipeline(
          Readable.from(['x', 'y', 'z']),
          new Transform({
            transform(chunk: string, _encoding, done) {
              setTimeout(() => done(null, `${chunk}:${currentRequestId()}`), id === 'first' ? 4 : 1);
            },
          }),
          new Writable({
            objectMode: true,
            write(chunk: Buffer, _encoding, done) {
              chunks.push(`${chunk.toString()}|${currentRequestId()}`);
              done();
            },
          }),
        );
        return { seen, chunks };
      });
    const [first, second] = await Promise.all([flow('first'), flow('second')]);
    expect(first.seen).toEqual(['first', 'first', 'first', 'first', 'first']);
    expect(second.seen).toEqual(['second', 'second', 'second', 'second', 'second']);
    expect(first.chunks).toEqual(['x:first|first', 'y:first|first', 'z:first|first']);
    expect(second.chunks).toEqual(['x:second|second', 'y:second|second', 'z:second|second']);
    expect(currentRequestContext()).toBeUndefined();
  });

  it('stamps the request id on the events and audit entries made in it, and none outside', () => {
    const inside = runWithRequestContext(context('req-9'), () => [
      createEvent({ type: 't', key: 'k', data: {} }),
      auditEvent({ actor: 'ops-command', action: 'user.promote', target: { type: 'user', id: 'u', label: null } }).event,
    ]);
    for (const event of inside) expect(event.trace?.requestId).toBe('req-9');
    expect(createEvent({ type: 't', key: 'k', data: {} }).trace?.requestId).toBeUndefined();
  });
});

describe('the request id on log lines', () => {
  const lines: Record<string, unknown>[] = [];
  const logger = createLogger({
    service: 'test',
    level: 'debug',
    destination: new Writable({
      write(chunk: Buffer, _encoding, done) {
        for (const line of chunk.toString().split('\n')) if (line.trim()) lines.push(JSON.parse(line) as Record<string, unknown>);
        done();
      },
    }),
  });

  it('is on every line written in a context, except a request line (which names its request itself), and on none outside', () => {
    runWithRequestContext(context('req-log'), () => {
      logger.info('inside');
      logger.info({ userId: 'u' }, 'inside with fields');
      logger.child({ component: 'x' }).warn('inside from a child');
      logger.debug({ req: { id: 'req-log', method: 'GET', url: '/' } }, 'request completed');
    });
    logger.info('outside');
    const byMessage = new Map(lines.map((line) => [line.msg, line]));
    expect(byMessage.get('inside')?.requestId).toBe('req-log');
    expect(byMessage.get('inside with fields')).toMatchObject({ requestId: 'req-log', userId: 'u' });
    expect(byMessage.get('inside from a child')).toMatchObject({ requestId: 'req-log', component: 'x' });
    expect(byMessage.get('request completed')).not.toHaveProperty('requestId');
    expect(byMessage.get('outside')).not.toHaveProperty('requestId');
  });
});

describe('HTTP requests', () => {
  const SECRET = 'request-context-test-secret-long-enough-123';
  const tokens = new IdentityTokens(SECRET);
  let server: Server;
  let base: string;
  /** Lets the slow request go on once the fast one has been answered. */
  let releaseSlow: (() => void) | undefined;

  beforeAll(async () => {
    const logger = createLogger({ service: 'test', level: 'silent' });
    const app = express();
    app.use(requestContext());
    app.use(requestLogging(logger));
    app.use(express.json());
    app.use(callerIdentity(tokens));
    app.post(
      '/act',
      route(async (req, res) => {
        const before = currentRequestContext();
        if ((req.body as { slow?: boolean }).slow) await new Promise<void>((resolve) => (releaseSlow = resolve));
        res.json({ before: before?.requestId, after: currentRequestId(), caller: currentRequestContext()?.caller });
      }),
    );
    app.use(errorHandler(logger));
    server = createServer(app).listen(0, '127.0.0.1');
    await once(server, 'listening');
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });

  afterAll(() => {
    server?.close();
  });

  it('gives two concurrent requests their own id and caller, across the body parser and a wait for the other', async () => {
    const token = await tokens.signCaller({ userId: 'user-1', role: 0, username: 'one', sessionId: 's' });
    const post = (id: string, body: object, headers: Record<string, string> = {}) =>
      fetch(`${base}/act`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-request-id': id, ...headers },
        body: JSON.stringify(body),
      });
    const slow = post('slow-request', { slow: true }, { [IDENTITY_HEADER]: token });
    // The slow one is waiting in its handler; the fast one comes, runs and is answered meanwhile.
    await waitUntil(() => releaseSlow !== undefined);
    const fast = await post('fast-request', {});
    releaseSlow!();
    const slowAnswer = (await (await slow).json()) as Record<string, unknown>;
    expect(await fast.json()).toEqual({ before: 'fast-request', after: 'fast-request', caller: { kind: 'anonymous' } });
    expect(slowAnswer).toEqual({ before: 'slow-request', after: 'slow-request', caller: { kind: 'user', userId: 'user-1', role: 0 } });
  });

  it('is one context per request, made once: a later question about the same request gets the same one', async () => {
    const ids: string[] = [];
    const probe = createServer((req, res) => {
      const first = httpRequestContext(req);
      runInHttpRequestContext(req, () => {
        ids.push(currentRequestId()!);
        res.end(String(first === httpRequestContext(req) && currentRequestContext() === first));
      });
    }).listen(0, '127.0.0.1');
    await once(probe, 'listening');
    const url = `http://127.0.0.1:${(probe.address() as AddressInfo).port}/`;
    try {
      expect(await (await fetch(url, { headers: { 'x-request-id': 'given.id-1' } })).text()).toBe('true');
      await fetch(url, { headers: { 'x-request-id': 'not a valid id!' } });
      await fetch(url);
    } finally {
      probe.close();
    }
    expect(ids[0]).toBe('given.id-1');
    expect(ids[1]).toMatch(/^[0-9a-f-]{36}$/);
    expect(ids[2]).toMatch(/^[0-9a-f-]{36}$/);
  });
});

async function waitUntil(ready: () => boolean): Promise<void> {
  for (let i = 0; i < 500 && !ready(); i++) await delay(10);
  if (!ready()) throw new Error('timed out');
}
