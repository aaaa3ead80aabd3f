import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { pino } from 'pino';
import { OutboxMailer, SmtpMailer } from '../src/index.js';
import { mailerContract, startSmtpCatcher, type SmtpCatcher } from '../src/testing/index.js';

const root = mkdtempSync(join(tmpdir(), 'portal-mail-'));
const FROM = 'The Investigation <no-reply@portal.test>';

// A real SMTP server (the smtp-server package) on loopback, keeping what it receives.
let smtp: SmtpCatcher;
beforeAll(async () => {
  smtp = await startSmtpCatcher();
});
afterAll(async () => {
  await smtp.close();
  rmSync(root, { recursive: true, force: true });
});

mailerContract('.eml outbox', {
  from: FROM,
  create: async () => new OutboxMailer(join(root, 'outbox'), FROM, pino({ level: 'silent' })),
  delivered: async () => {
    try {
      return readdirSync(join(root, 'outbox'))
        .filter((name) => name.endsWith('.eml'))
        .map((name) => readFileSync(join(root, 'outbox', name)));
    } catch {
      return [];
    }
  },
});

mailerContract('SMTP', {
  from: FROM,
  create: async () => new SmtpMailer(smtp.url, FROM),
  delivered: async () => smtp.messages,
  envelopes: async () => smtp.envelopes,
});

describe('SMTP mailer', () => {
  it('rejects when the server cannot be reached, so the sender retries', async () => {
    const mailer = new SmtpMailer('smtp://127.0.0.1:1', FROM);
    await expect(mailer.send({ to: 'a@example.org', subject: 's', text: 't', html: '<p>t</p>' })).rejects.toThrow();
    await mailer.close();
  });
});
