import { once } from 'node:events';
import type { AddressInfo } from 'node:net';
import type { Server } from 'node:http';
import { Writable } from 'node:stream';
import express from 'express';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLogger } from '../src/logging/logger.js';
import { errorHandler, requestId, requestLogging, route } from '../src/http/express-kit.js';
import { HttpError } from '../src/http/http-error.js';

// The services' request log (requestLogging): one line per request, at error for failures and
// 5xx, info for refusals, debug for the rest, carrying the gateway's request id; URLs with their
// credentials hidden. It replaced pino-http and writes the lines pino-http wrote.

const lines: Record<string, unknown>[] = [];
let server: Server;
let base: string;

beforeAll(async () => {
  const destination = new Writable({
    write(chunk: Buffer, _encoding, done) {
      for (const line of chunk.toString().split('\n')) if (line.trim()) lines.push(JSON.parse(line) as Record<string, unknown>);
      done();
    },
  });
  const logger = createLogger({ service: 'test', level: 'debug', destination });
  const app = express();
  app.use(requestLogging(logger));
  app.get('/ok', (req, res) => {
    res.json({ id: requestId(req) });
  });
  app.get(
    '/refused',
    route(async () => {
      throw new HttpError(403, 'forbidden', 'No');
    }),
  );
  app.get(
    '/broken',
    route(async () => {
      throw new Error('the database is gone');
    }),
  );
  app.use(errorHandler(logger));
  server = app.listen(0, '127.0.0.1');
  await once(server, 'listening');
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterAll(() => {
  server?.close();
});

const lineOf = (id: string) => lines.find((line) => (line.req as { id?: string } | undefined)?.id === id && line.res !== undefined);

describe('request logging', () => {
  it('keeps the gateway request id, on the request and on the answer, and makes one when there is none', async () => {
    const given = await fetch(`${base}/ok`, { headers: { 'x-request-id': 'req-given-1' } });
    expect(given.headers.get('x-request-id')).toBe('req-given-1');
    expect(await given.json()).toEqual({ id: 'req-given-1' });
    for (const headers of [{}, { 'x-request-id': 'spaces are not allowed' }] as Record<string, string>[]) {
      const made = await fetch(`${base}/ok`, { headers });
      const id = made.headers.get('x-request-id')!;
      expect(id).toMatch(/^[0-9a-f-]{36}$/);
      expect(await made.json()).toEqual({ id });
    }
  });

  it('writes a line per request at the level its outcome calls for, with the secrets of its URL hidden', async () => {
    await fetch(`${base}/ok?token=secret-token-value&page=2`, { headers: { 'x-request-id': 'req-ok' } });
    await fetch(`${base}/refused`, { headers: { 'x-request-id': 'req-refused' } });
    await fetch(`${base}/broken`, { headers: { 'x-request-id': 'req-broken' } });
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(lineOf('req-ok')).toMatchObject({
      level: 20,
      service: 'test',
      req: { id: 'req-ok', method: 'GET', url: '/ok?token=[redacted]&page=2' },
      res: { statusCode: 200 },
      msg: 'request completed',
    });
    expect(typeof lineOf('req-ok')!.responseTime).toBe('number');
    expect(JSON.stringify(lines)).not.toContain('secret-token-value');
    expect(lineOf('req-refused')).toMatchObject({ level: 30, res: { statusCode: 403 }, msg: 'request completed' });
    expect(lineOf('req-broken')).toMatchObject({
      level: 50,
      res: { statusCode: 500 },
      msg: 'request errored',
      err: { message: 'failed with status code 500' },
    });
    // The error handler's own line names the request and the error itself.
    expect(lines.find((line) => line.msg === 'request failed')).toMatchObject({
      level: 50,
      req: { id: 'req-broken', method: 'GET', url: '/broken' },
      err: { message: 'the database is gone' },
    });
  });

  it('writes nothing for answers whose level is off', async () => {
    const quiet: string[] = [];
    const logger = createLogger({
      service: 'quiet',
      level: 'info',
      destination: new Writable({ write: (chunk: Buffer, _e, done) => (quiet.push(chunk.toString()), done()) }),
    });
    const app = express();
    app.use(requestLogging(logger));
    app.get('/ok', (_req, res) => res.json({ ok: true }));
    const quietServer = app.listen(0, '127.0.0.1');
    await once(quietServer, 'listening');
    try {
      const url = `http://127.0.0.1:${(quietServer.address() as AddressInfo).port}`;
      expect((await fetch(`${url}/ok`)).status).toBe(200);
      expect((await fetch(`${url}/missing`)).status).toBe(404);
      await new Promise((resolve) => setTimeout(resolve, 50));
      expect(quiet.map((line) => JSON.parse(line) as { res: { statusCode: number } }).map((line) => line.res.statusCode)).toEqual([404]);
    } finally {
      quietServer.close();
    }
  });
});
