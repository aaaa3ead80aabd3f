import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SMTPServer } from 'smtp-server';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { pino } from 'pino';
import { OutboxMailer, SmtpMailer } from '../src/index.js';
import { mailerContract } from '../src/testing/index.js';

const root = mkdtempSync(join(tmpdir(), 'portal-mail-'));
const FROM = 'The Investigation <no-reply@portal.test>';

// A real SMTP server (the smtp-server package) on loopback, keeping what it receives.
const received: Buffer[] = [];
const smtp = new SMTPServer({
  authOptional: true,
  disabledCommands: ['STARTTLS'],
  onData(stream, _session, callback) {
    const chunks: Buffer[] = [];
    stream.on('data', (chunk: Buffer) => chunks.push(chunk));
    stream.on('end', () => {
      received.push(Buffer.concat(chunks));
      callback();
    });
  },
});
let smtpPort = 0;
beforeAll(async () => {
  await new Promise<void>((resolve) => smtp.listen(0, '127.0.0.1', () => resolve()));
  smtpPort = (smtp.server.address() as { port: number }).port;
});
afterAll(async () => {
  await new Promise<void>((resolve) => smtp.close(() => resolve()));
  rmSync(root, { recursive: true, force: true });
});

mailerContract('.eml outbox', {
  from: FROM,
  create: async () => new OutboxMailer(join(root, 'outbox'), FROM, pino({ level: 'silent' })),
  delivered: async () => {
    try {
      return readdirSync(join(root, 'outbox')).filter((name) => name.endsWith('.eml')).map((name) => readFileSync(join(root, 'outbox', name)));
    } catch {
      return [];
    }
  },
});

mailerContract('SMTP', {
  from: FROM,
  create: async () => new SmtpMailer(`smtp://127.0.0.1:${smtpPort}`, FROM),
  delivered: async () => received,
});

describe('SMTP mailer', () => {
  it('rejects when the server cannot be reached, so the sender retries', async () => {
    const mailer = new SmtpMailer('smtp://127.0.0.1:1', FROM);
    await expect(mailer.send({ to: 'a@example.org', subject: 's', text: 't', html: '<p>t</p>' })).rejects.toThrow();
    await mailer.close();
  });
});
