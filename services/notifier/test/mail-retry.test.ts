import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { pino } from 'pino';
import { SMTPServer } from 'smtp-server';
import { SqliteEventBus, SqliteJobQueue } from '@portal/platform';
import { waitFor } from '@portal/platform/testing';
import { notifierSettingsFromEnv } from '../src/config.js';
import type { MailJob } from '../src/emails/mail-job.js';
import { createNotifier } from '../src/service.js';

const root = mkdtempSync(join(tmpdir(), 'notifier-mail-retry-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));

async function freeLoopbackPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

const notice = (eventId: string, sendBy: number): MailJob => ({
  kind: 'account-notice',
  eventId,
  sendBy: new Date(sendBy).toISOString(),
  to: `${eventId}@example.org`,
  fullName: 'Ida Informant',
  notice: 'password-changed',
});

describe('e-mails while the mail server is away (real SMTP client and server, real queue)', () => {
  it('wait with no try spent until the server answers, and fail for good, saying why, once their time is up', async () => {
    const logger = pino({ level: 'silent' });
    const port = await freeLoopbackPort();
    const bus = new SqliteEventBus({ file: join(root, 'bus.sqlite'), logger, pollIntervalMs: 50 });
    const mail = new SqliteJobQueue<MailJob>({ file: join(root, 'jobs.sqlite'), queue: 'mail', logger, pollIntervalMs: 50 });
    const notifier = createNotifier(
      notifierSettingsFromEnv({ INTERNAL_SECRET: 'x'.repeat(48), DATA_DIR: root, SMTP_URL: `smtp://127.0.0.1:${port}` }),
      { bus, mail, logger, messageRetryBackoff: { initialMs: 100, maxMs: 200 } },
    );
    await notifier.start();
    const options = { attempts: 2, backoff: { type: 'fixed' as const, delay: 50 } };
    await mail.add('account-notice', notice('patient', Date.now() + 60_000), { jobId: 'patient', ...options });
    await mail.add('account-notice', notice('hurried', Date.now() + 1_000), { jobId: 'hurried', ...options });

    // The server is away for longer than both jobs' two tries would last: neither is spent.
    const failed = await waitFor(async () => ((await mail.getJob('hurried'))?.state === 'failed' ? mail.getJob('hurried') : null), {
      timeoutMs: 10_000,
      what: 'the hurried e-mail to give up at its time',
    });
    expect(failed!.failedReason).toMatch(/^the mail server could not be reached in time \(/);
    expect(failed!.attemptsMade).toBe(1);
    expect(await mail.getJob('patient')).toMatchObject({ state: 'delayed', attemptsMade: 0 });
    expect(await notifier.metrics.text()).toMatch(/portal_emails_failed_total\{kind="account-notice",service="notifier"\} [1-9]/);

    // The mail server comes back on its address: the waiting e-mail goes, once.
    const received: string[] = [];
    const server = new SMTPServer({
      authOptional: true,
      disabledCommands: ['STARTTLS'],
      onData(stream, session, callback) {
        stream.resume();
        stream.on('end', () => {
          received.push(session.envelope.rcptTo.map((to) => to.address).join(','));
          callback();
        });
      },
    });
    await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', () => resolve()));
    try {
      await waitFor(async () => (await mail.getJob('patient'))?.state === 'completed', {
        timeoutMs: 10_000,
        what: 'the e-mail once the server is back',
      });
      expect(received).toEqual(['patient@example.org']);
    } finally {
      await notifier.stop();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      await mail.close();
      await bus.close();
    }
  });
});
