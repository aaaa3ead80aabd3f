import { existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { createServer, type AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { pino } from 'pino';
import { SMTPServer } from 'smtp-server';
import { NO_MAIL_SERVER, OutboxMailer, SqliteEventBus, SqliteJobQueue } from '@portal/platform';
import { waitFor } from '@portal/platform/testing';
import { notifierSettingsFromEnv } from '../src/config.js';
import type { MailJob } from '../src/emails/mail-job.js';
import { createNotifier, mailerFromSettings } from '../src/service.js';

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

/** A real SMTP server on the loopback that records whom each message was for. */
async function listeningSmtp(port: number): Promise<{ received: string[]; close(): Promise<void> }> {
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
  return { received, close: () => new Promise<void>((resolve) => server.close(() => resolve())) };
}

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
    const server = await listeningSmtp(port);
    try {
      await waitFor(async () => (await mail.getJob('patient'))?.state === 'completed', {
        timeoutMs: 10_000,
        what: 'the e-mail once the server is back',
      });
      expect(server.received).toEqual(['patient@example.org']);
    } finally {
      await notifier.stop();
      await server.close();
      await mail.close();
      await bus.close();
    }
  });

  // A notifier on distributed servers without SMTP_URL (a Secret portal-smtp without that key)
  // used to write every e-mail as an .eml file into its pod's scratch folder: reset codes and
  // confirmation links "sent" that nobody got, and gone with the pod.
  it('on distributed servers without SMTP_URL: writes no .eml, keeps each e-mail waiting with no try spent, and says why; sent once SMTP_URL is set', async () => {
    const logger = pino({ level: 'silent' });
    const pod = join(root, 'pod');
    const bus = new SqliteEventBus({ file: join(root, 'pod-bus.sqlite'), logger, pollIntervalMs: 50 });
    const mail = new SqliteJobQueue<MailJob>({ file: join(root, 'pod-jobs.sqlite'), queue: 'mail', logger, pollIntervalMs: 50 });
    const unset = notifierSettingsFromEnv({ INTERNAL_SECRET: 'x'.repeat(48), DATA_DIR: pod });
    // On one machine (the all-in-one portal, a rehearsal) the outbox under DATA_DIR stays.
    expect(mailerFromSettings(unset, logger)).toBeInstanceOf(OutboxMailer);
    const first = createNotifier(unset, { bus, mail, logger, distributed: true, messageRetryBackoff: { initialMs: 100, maxMs: 200 } });
    // Readiness answers degraded with the reason (portal_dependency_up{dependency="mailer"} 0: PortalDependencyDown).
    await expect(first.mailer.ping()).rejects.toThrow(NO_MAIL_SERVER);
    await first.start();
    await mail.add('account-notice', notice('kept', Date.now() + 60_000), {
      jobId: 'kept',
      attempts: 2,
      backoff: { type: 'fixed', delay: 50 },
    });
    await waitFor(async () => (await mail.getJob('kept'))?.state === 'delayed', { timeoutMs: 10_000, what: 'the e-mail put off' });
    // Tried again and again for a second: still waiting, no try spent, nothing written anywhere.
    await new Promise((resolve) => setTimeout(resolve, 1000));
    expect(await mail.getJob('kept')).toMatchObject({ state: 'delayed', attemptsMade: 0 });
    expect(existsSync(join(pod, 'outbox')) ? readdirSync(join(pod, 'outbox')) : []).toEqual([]);
    expect(await first.metrics.text()).toMatch(/portal_emails_failed_total\{kind="account-notice",service="notifier"\} [1-9]/);
    await first.stop();

    // The Secret mended and the pod restarted with SMTP_URL: the e-mail that waited goes, once.
    const port = await freeLoopbackPort();
    const server = await listeningSmtp(port);
    const mended = createNotifier(
      notifierSettingsFromEnv({ INTERNAL_SECRET: 'x'.repeat(48), DATA_DIR: pod, SMTP_URL: `smtp://127.0.0.1:${port}` }),
      { bus, mail, logger, distributed: true, messageRetryBackoff: { initialMs: 100, maxMs: 200 } },
    );
    await mended.start();
    try {
      await waitFor(async () => (await mail.getJob('kept'))?.state === 'completed', {
        timeoutMs: 10_000,
        what: 'the e-mail once SMTP_URL is set',
      });
      expect(server.received).toEqual(['kept@example.org']);
    } finally {
      await mended.stop();
      await server.close();
      await mail.close();
      await bus.close();
    }
  });
});
