import { createServer, type AddressInfo } from 'node:net';
import { describe, expect, it } from 'vitest';
import mongoose from 'mongoose';
import { Redis } from 'ioredis';
import { Kafka, logLevel } from 'kafkajs';
import nodemailer from 'nodemailer';
import { S3Client, HeadBucketCommand } from '@aws-sdk/client-s3';
import { z } from 'zod';
import { DependencyUnavailableError, PoisonMessageError, classifyFailure, parseEventData } from '../src/resilience/failures.js';

/** A port nothing listens on (bound, then closed). */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

/** What a client library throws when its server is away: the real error, from the real client. */
async function thrownBy(work: () => Promise<unknown>): Promise<unknown> {
  try {
    await work();
  } catch (error) {
    return error;
  }
  throw new Error('expected the call to fail');
}

describe('classifyFailure: a dependency away, told from the real clients', () => {
  it('MongoDB (mongoose): no server to select', async () => {
    const port = await closedPort();
    const connection = mongoose.createConnection(`mongodb://127.0.0.1:${port}/x`, { serverSelectionTimeoutMS: 300 });
    const error = await thrownBy(() => connection.asPromise());
    await connection.close().catch(() => undefined);
    expect(classifyFailure(error)).toMatchObject({ kind: 'dependency', dependency: 'mongodb' });
  });

  it('Redis (ioredis): a command while the server is away', async () => {
    const port = await closedPort();
    const redis = new Redis({ host: '127.0.0.1', port, maxRetriesPerRequest: 1, retryStrategy: () => 50, lazyConnect: false });
    redis.on('error', () => undefined);
    const error = await thrownBy(() => redis.get('k'));
    redis.disconnect();
    expect(classifyFailure(error)).toMatchObject({ kind: 'dependency', dependency: 'redis' });
  });

  it('S3 (AWS SDK): a request to an endpoint that does not answer', async () => {
    const port = await closedPort();
    const s3 = new S3Client({
      endpoint: `http://127.0.0.1:${port}`,
      region: 'us-east-1',
      forcePathStyle: true,
      credentials: { accessKeyId: 'a', secretAccessKey: 'b' },
      maxAttempts: 1,
    });
    const error = await thrownBy(() => s3.send(new HeadBucketCommand({ Bucket: 'b' })));
    s3.destroy();
    expect(classifyFailure(error)).toMatchObject({ kind: 'dependency', dependency: 's3' });
  });

  it('SMTP (nodemailer): the mail server refuses connections', async () => {
    const port = await closedPort();
    const transport = nodemailer.createTransport({ host: '127.0.0.1', port, secure: false, connectionTimeout: 1000 });
    const error = await thrownBy(() => transport.sendMail({ from: 'a@example.org', to: 'b@example.org', text: 'x' }));
    expect(classifyFailure(error)).toMatchObject({ kind: 'dependency', dependency: 'smtp' });
  });

  it('Kafka (kafkajs): no broker', async () => {
    const port = await closedPort();
    const producer = new Kafka({
      brokers: [`127.0.0.1:${port}`],
      logLevel: logLevel.NOTHING,
      retry: { retries: 1, initialRetryTime: 50 },
    }).producer();
    const error = await thrownBy(() => producer.connect());
    expect(classifyFailure(error)).toMatchObject({ kind: 'dependency', dependency: 'kafka' });
  });

  it('a neighbouring service over HTTP (fetch): connection refused, and a timeout', async () => {
    const port = await closedPort();
    expect(classifyFailure(await thrownBy(() => fetch(`http://127.0.0.1:${port}/`)))).toMatchObject({ kind: 'dependency' });
    const silent = createServer(() => undefined);
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
    const error = await thrownBy(() =>
      fetch(`http://127.0.0.1:${(silent.address() as AddressInfo).port}/`, { signal: AbortSignal.timeout(200) }),
    );
    silent.close();
    expect(classifyFailure(error)).toMatchObject({ kind: 'dependency' });
  });

  it('a dependency named by the code that knows it, also behind a wrapper', () => {
    const away = new DependencyUnavailableError('identity', 'identity answered 503');
    expect(classifyFailure(away)).toMatchObject({ kind: 'dependency', dependency: 'identity' });
    expect(classifyFailure(new Error('sending failed', { cause: away }))).toMatchObject({ kind: 'dependency', dependency: 'identity' });
  });
});

describe('classifyFailure: poison, and what it does not recognise', () => {
  it('a message that fails its schema, is not JSON, or says it is poison', () => {
    expect(classifyFailure(z.object({ id: z.string() }).safeParse({}).error).kind).toBe('poison');
    expect(classifyFailure(thrownSync(() => JSON.parse('{'))).kind).toBe('poison');
    expect(classifyFailure(new PoisonMessageError('never passes')).kind).toBe('poison');
  });

  it('anything else is unknown (retried a few times, then a dead letter)', () => {
    expect(classifyFailure(new TypeError("Cannot read properties of undefined (reading 'x')")).kind).toBe('unknown');
    expect(classifyFailure('a string').kind).toBe('unknown');
  });

  it('parseEventData answers the data, or a PoisonMessageError naming the event and the fields', () => {
    const schema = z.object({ userId: z.string() });
    expect(parseEventData(schema, { id: 'e1', type: 'user.deleted', data: { userId: 'u1' } })).toEqual({ userId: 'u1' });
    expect(() => parseEventData(schema, { id: 'e2', type: 'user.deleted', data: {} })).toThrow(
      /event e2 \(user.deleted\) does not match its schema: userId/,
    );
  });
});

function thrownSync(work: () => unknown): unknown {
  try {
    work();
  } catch (error) {
    return error;
  }
  throw new Error('expected a throw');
}
