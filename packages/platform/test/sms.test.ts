import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { pino } from 'pino';
import { OutboxSmsSender, SmsRefusedError, TwilioSmsSender } from '../src/index.js';
import { smsSenderContract } from '../src/testing/index.js';

const root = mkdtempSync(join(tmpdir(), 'portal-sms-'));
const SID = 'AC00000000000000000000000000000001';
const TOKEN = 'stand-in-auth-token';

/**
 * A STAND-IN for Twilio's REST API (no provider is reachable from the test machines): a real HTTP
 * server speaking the part of the Messages API the adapter uses — POST
 * /2010-04-01/Accounts/{sid}/Messages.json (form fields To, From or MessagingServiceSid, Body;
 * HTTP basic auth with the account SID and auth token) answering 201 with the message resource,
 * and GET /2010-04-01/Accounts/{sid}.json — with Twilio's error shape for a refused number (21211)
 * and a failing server (500).
 */
interface Received {
  to: string;
  body: string;
  from: string | null;
}
let server: Server;
let baseUrl: string;
const received: Received[] = [];
beforeAll(async () => {
  server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const auth = Buffer.from((req.headers.authorization ?? '').replace(/^Basic /, ''), 'base64').toString();
      const answer = (status: number, body: object) =>
        res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));
      if (auth !== `${SID}:${TOKEN}`) return answer(401, { code: 20003, message: 'Authenticate', status: 401 });
      if (req.method === 'GET' && req.url === `/2010-04-01/Accounts/${SID}.json`) return answer(200, { sid: SID, status: 'active' });
      if (req.method === 'POST' && req.url === `/2010-04-01/Accounts/${SID}/Messages.json`) {
        const form = new URLSearchParams(Buffer.concat(chunks).toString());
        const to = form.get('To') ?? '';
        if (to === '+15005550001')
          return answer(400, { code: 21211, message: `The 'To' number ${to} is not a valid phone number.`, status: 400 });
        if (to === '+15005550009') return answer(500, { code: 20500, message: 'Internal Server Error', status: 500 });
        received.push({ to, body: form.get('Body') ?? '', from: form.get('From') });
        return answer(201, {
          sid: `SM${received.length.toString().padStart(32, '0')}`,
          status: 'queued',
          to,
          from: form.get('From'),
          body: form.get('Body'),
        });
      }
      answer(404, { code: 20404, message: 'Not found', status: 404 });
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(async () => {
  await new Promise<void>((resolve) => server.close(() => resolve()));
  rmSync(root, { recursive: true, force: true });
});

const twilioSender = () => new TwilioSmsSender({ accountSid: SID, authToken: TOKEN, from: '+12025550100', apiBaseUrl: baseUrl });

smsSenderContract('JSON outbox', {
  create: async () => new OutboxSmsSender(join(root, 'sms-outbox'), pino({ level: 'silent' })),
  delivered: async () => {
    try {
      const dir = join(root, 'sms-outbox');
      return readdirSync(dir)
        .filter((name) => name.endsWith('.json'))
        .map((name) => JSON.parse(readFileSync(join(dir, name), 'utf8')) as { to: string; body: string });
    } catch {
      return [];
    }
  },
});

smsSenderContract('Twilio (against a stand-in of its Messages API)', {
  create: async () => twilioSender(),
  delivered: async () => received,
});

describe('Twilio sender', () => {
  it('sends from the configured number', async () => {
    await twilioSender().send({ to: '+12025550124', body: 'from check', messageId: 'm1' });
    expect(received.find((message) => message.body === 'from check')?.from).toBe('+12025550100');
  });

  it('reports a number the provider refuses for good as SmsRefusedError, and a server failure as a plain error (retried)', async () => {
    await expect(twilioSender().send({ to: '+15005550001', body: 'x', messageId: 'm2' })).rejects.toBeInstanceOf(SmsRefusedError);
    const failure = await twilioSender()
      .send({ to: '+15005550009', body: 'x', messageId: 'm3' })
      .catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(Error);
    expect(failure).not.toBeInstanceOf(SmsRefusedError);
    expect(String(failure)).toContain('500');
  });

  it('fails ping with wrong credentials', async () => {
    const wrong = new TwilioSmsSender({ accountSid: SID, authToken: 'wrong', from: '+12025550100', apiBaseUrl: baseUrl });
    await expect(wrong.ping()).rejects.toThrow();
  });
});

describe('JSON outbox', () => {
  it("keeps to, body and sent_at in one file per message, and forgets a recipient's files", async () => {
    const dir = join(root, 'forget');
    const sender = new OutboxSmsSender(dir, pino({ level: 'silent' }));
    await sender.send({ to: '+12025550123', body: 'a', messageId: 'x.1', recipientId: 'abc-1' });
    await sender.send({ to: '+12025550123', body: 'b', messageId: 'x.2', recipientId: 'def-2' });
    const files = readdirSync(dir);
    expect(files).toHaveLength(2);
    const one = JSON.parse(readFileSync(join(dir, files[0]!), 'utf8')) as Record<string, unknown>;
    expect(Object.keys(one)).toEqual(expect.arrayContaining(['to', 'body', 'sent_at']));
    expect(Number.isNaN(Date.parse(String(one.sent_at)))).toBe(false);
    expect(await sender.forget('abc-1')).toBe(1);
    expect(readdirSync(dir)).toHaveLength(1);
  });
});
