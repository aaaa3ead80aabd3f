import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { pino } from 'pino';
import type { AppointmentRecipient, DeliveryReport } from '@portal/contracts';
import { NO_SMS_PROVIDER, OutboxMailer, SqliteJobQueue, TwilioSmsSender, UnconfiguredSmsSender, type SmsSender } from '@portal/platform';
import { waitFor } from '@portal/platform/testing';
import { appointmentJobId, type AppointmentJob } from '../src/appointments/appointment-job.js';
import { appointmentSender } from '../src/appointments/appointment-sender.js';
import type { AppointmentDirectory } from '../src/appointments/identity-client.js';
import { appointmentEmail, appointmentSms } from '../src/appointments/messages.js';
import { smsFromSettings } from '../src/service.js';
import { notifierSettingsFromEnv } from '../src/config.js';

/**
 * The sending side of appointment messages on the real queue (SQLite), the real .eml outbox and
 * the real Twilio client. Two stand-ins, because the far ends are not what is tested here:
 * - Twilio's Messages API (no provider is reachable): a local HTTP server answering 201, a 500 for
 *   +12025550199 (always) and for +12025550197 while `providerDown` says so, and Twilio's 21211
 *   refusal for +12025550198;
 * - identity's two internal routes (recipient, deliveries), as a map in memory; identity's side is
 *   tested through HTTP in tests/integration/appointments.test.ts.
 */
const SID = 'AC00000000000000000000000000000002';
const logger = pino({ level: 'silent' });
const root = mkdtempSync(join(tmpdir(), 'appointment-sender-'));
let server: Server;
let twilioUrl: string;
const texts: string[] = [];
let providerDown = false;

beforeAll(async () => {
  server = createServer((req, res) => {
    let body = '';
    req.on('data', (chunk: Buffer) => (body += chunk.toString()));
    req.on('end', () => {
      const to = new URLSearchParams(body).get('To');
      const answer = (status: number, json: object) =>
        res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(json));
      if (to === '+12025550199' || (to === '+12025550197' && providerDown))
        return answer(500, { code: 20500, message: 'Internal Server Error', status: 500 });
      if (to === '+12025550198') return answer(400, { code: 21211, message: 'Invalid To number', status: 400 });
      texts.push(to ?? '');
      answer(201, { sid: `SM${texts.length}`, status: 'queued' });
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  twilioUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(async () => {
  await new Promise<void>((resolve) => server.close(() => resolve()));
  rmSync(root, { recursive: true, force: true });
});

class DirectoryStandIn implements AppointmentDirectory {
  readonly appointments = new Map<string, AppointmentRecipient>();
  readonly reports: (DeliveryReport & { appointmentId: string })[] = [];
  async recipient(id: string) {
    return this.appointments.get(id) ?? null;
  }
  async report(appointmentId: string, report: DeliveryReport) {
    const appointment = this.appointments.get(appointmentId);
    if (!appointment || appointment.version !== report.version) return false;
    this.reports.push({ appointmentId, ...report });
    if (report.state === 'sent') appointment.sent.push(report.key);
    return true;
  }
}

function recipient(id: string, overrides: Partial<AppointmentRecipient> = {}): AppointmentRecipient {
  return {
    appointmentId: id,
    version: 1,
    start: new Date(Date.now() + 3600_000).toISOString(),
    time_zone: 'Europe/Berlin',
    place: 'Main St & 1st Ave',
    note: '',
    email: `${id}@example.org`,
    user_id: null,
    full_name: 'Ida Informant',
    phone: '+12025550123',
    phone_problem: null,
    call_number: '+12025550123',
    sms_reminders: true,
    sent: [],
    ...overrides,
  };
}

async function harness(name: string, sms?: SmsSender) {
  const directory = new DirectoryStandIn();
  const queue = new SqliteJobQueue<AppointmentJob>({
    file: join(root, `${name}.sqlite`),
    queue: 'appointment-messages',
    logger,
    pollIntervalMs: 50,
  });
  const outbox = join(root, `${name}-outbox`);
  const send = appointmentSender({
    directory,
    mailer: new OutboxMailer(outbox, 'Test <no-reply@portal.test>', logger),
    sms: sms ?? new TwilioSmsSender({ accountSid: SID, authToken: 'token', from: '+12025550100', apiBaseUrl: twilioUrl }),
    branding: { productName: 'Operation Test', publicUrl: 'http://localhost' },
    logger,
    clock: Date.now,
    attempts: 3,
    retryBackoff: { initialMs: 100, maxMs: 200 },
  });
  const worker = await queue.work(send, { concurrency: 2 });
  const add = (job: AppointmentJob) =>
    queue.add(job.kind, job, { jobId: appointmentJobId(job), attempts: 3, backoff: { type: 'fixed', delay: 50 } });
  const mails = () => {
    try {
      return readdirSync(outbox).filter((file) => file.endsWith('.eml'));
    } catch {
      return [];
    }
  };
  return { directory, queue, add, mails, close: async () => (await worker.close(), await queue.close()) };
}

const reminder = (appointmentId: string, channel: 'email' | 'sms', version = 1): AppointmentJob => ({
  kind: 'reminder',
  appointmentId,
  version,
  channel,
  offset: '2h',
  offsetMs: 7200_000,
});

describe('sending appointment messages', () => {
  it("while the text provider does not answer, says 'retrying' and tries again with no try counted until the start; then not sent, never late", async () => {
    const h = await harness('provider-away');
    const start = Date.now() + 1500;
    h.directory.appointments.set('a1', recipient('a1', { phone: '+12025550199', start: new Date(start).toISOString() }));
    const job = await h.add(reminder('a1', 'sms'));
    await waitFor(() => h.directory.reports.some((report) => report.state === 'not-sent'), { what: 'the message dropped at the start' });
    const states = h.directory.reports.map((report) => report.state);
    expect(states.filter((state) => state === 'retrying').length).toBeGreaterThanOrEqual(3);
    expect(states.at(-1)).toBe('not-sent');
    expect(h.directory.reports[0]).toMatchObject({
      key: '2h:sms',
      reason: expect.stringMatching(/the text provider is not answering .*HTTP 500/),
    });
    expect(h.directory.reports.at(-1)!.reason).toBe('the appointment started before the text provider could be reached');
    // More tries than the job's 3, none of them counted; nothing went out after the start.
    expect(await h.queue.getJob(job.id)).toMatchObject({ state: 'completed', attemptsMade: 1 });
    expect(texts).not.toContain('+12025550199');
    await h.close();
  });

  it('sends the message once the provider answers again before the start, the call sheet going from retrying to sent', async () => {
    const h = await harness('provider-back');
    providerDown = true;
    h.directory.appointments.set('a2', recipient('a2', { phone: '+12025550197' }));
    const job = await h.add(reminder('a2', 'sms'));
    await waitFor(() => h.directory.reports.filter((report) => report.state === 'retrying').length >= 2, { what: 'two tries while away' });
    providerDown = false;
    await waitFor(() => h.directory.reports.some((report) => report.state === 'sent'), { what: 'the text once the provider is back' });
    expect(texts.filter((to) => to === '+12025550197')).toHaveLength(1);
    expect(await h.queue.getJob(job.id)).toMatchObject({ state: 'completed', attemptsMade: 1 });
    await h.close();
  });

  it('records a number the provider refuses for good at once, without retrying', async () => {
    const h = await harness('refused');
    h.directory.appointments.set('a2', recipient('a2', { phone: '+12025550198' }));
    const job = await h.add(reminder('a2', 'sms'));
    await waitFor(async () => (await h.queue.getJob(job.id))?.state === 'completed' || null, { what: 'the job to end' });
    expect((await h.queue.getJob(job.id))!.attemptsMade).toBe(1);
    expect(h.directory.reports).toEqual([expect.objectContaining({ state: 'failed', reason: expect.stringContaining('21211') })]);
    await h.close();
  });

  it('sends nothing for a moved or cancelled appointment, nothing after the start, and nothing twice', async () => {
    const h = await harness('checks');
    h.directory.appointments.set('moved', recipient('moved', { version: 2 }));
    h.directory.appointments.set('started', recipient('started', { start: new Date(Date.now() - 1000).toISOString() }));
    h.directory.appointments.set('due', recipient('due'));
    const jobs = await Promise.all([
      h.add(reminder('moved', 'email', 1)),
      h.add(reminder('cancelled', 'email')),
      h.add(reminder('started', 'email')),
      h.add(reminder('due', 'email')),
      h.add(reminder('due', 'sms')),
    ]);
    await waitFor(
      async () => {
        const states = await Promise.all(jobs.map(async (job) => (await h.queue.getJob(job.id))?.state));
        return states.every((state) => state === 'completed') || null;
      },
      { what: 'every job to end' },
    );
    expect((await h.queue.getJob(jobs[0].id))!.returnValue).toEqual({ skipped: 'the appointment was moved' });
    expect((await h.queue.getJob(jobs[1].id))!.returnValue).toEqual({ skipped: 'the appointment is cancelled' });
    expect(h.directory.reports.find((report) => report.appointmentId === 'started')).toMatchObject({
      state: 'not-sent',
      reason: 'the appointment had started',
    });
    expect(h.mails()).toHaveLength(1);
    expect(texts.filter((to) => to === '+12025550123')).toHaveLength(1);
    // The same message run again (a job id that expired and was queued anew): already sent, skipped.
    const again = await h.queue.add('reminder', reminder('due', 'email'), { jobId: 'again' });
    await waitFor(async () => (await h.queue.getJob(again.id))?.state === 'completed' || null, { what: 'the repeated job' });
    expect((await h.queue.getJob(again.id))!.returnValue).toEqual({ skipped: 'already sent' });
    expect(h.mails()).toHaveLength(1);
    await h.close();
  });

  // A notifier on distributed servers without Twilio used to write texts into its pod's scratch
  // folder and record them sent: nobody got them, the call sheet said otherwise.
  it('on distributed servers without a text provider, sends no text, writes none, and records each as failed with why', async () => {
    const settings = notifierSettingsFromEnv({ INTERNAL_SECRET: 'x'.repeat(32), DATA_DIR: join(root, 'pod') });
    const sms = smsFromSettings(settings, logger, { distributed: true });
    expect(sms).toBeInstanceOf(UnconfiguredSmsSender);
    await expect(sms.ping()).rejects.toThrow(NO_SMS_PROVIDER);
    // On one machine (all-in-one, a rehearsal) the outbox under DATA_DIR stays.
    expect(smsFromSettings(settings, logger)).not.toBeInstanceOf(UnconfiguredSmsSender);

    const h = await harness('no-provider', sms);
    h.directory.appointments.set('a3', recipient('a3'));
    const text = await h.add(reminder('a3', 'sms'));
    const mail = await h.add(reminder('a3', 'email'));
    await waitFor(
      async () =>
        ((await h.queue.getJob(text.id))?.state === 'completed' && (await h.queue.getJob(mail.id))?.state === 'completed') || null,
      { what: 'both jobs to end' },
    );
    expect((await h.queue.getJob(text.id))!.attemptsMade).toBe(1);
    expect((await h.queue.getJob(text.id))!.returnValue).toEqual({ failed: NO_SMS_PROVIDER });
    expect(h.directory.reports).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ appointmentId: 'a3', key: '2h:sms', state: 'failed', reason: NO_SMS_PROVIDER }),
        expect.objectContaining({ appointmentId: 'a3', key: '2h:email', state: 'sent' }),
      ]),
    );
    expect(h.mails()).toHaveLength(1);
    expect(() => readdirSync(join(root, 'pod', 'sms-outbox'))).toThrow();
    await h.close();
  });
});

describe('what the messages say', () => {
  const branding = { productName: 'Operation Test', publicUrl: 'https://portal.example.org' };
  const job = (kind: AppointmentJob['kind']): AppointmentJob =>
    ({
      appointmentId: 'a1',
      version: 1,
      kind,
      offset: kind === 'reminder' ? '2h' : null,
      channel: 'email',
      message: 'Rain: wait inside',
    }) as AppointmentJob;

  it('names the number that will be called in every message, by e-mail and by text, spaced as the screens show it', () => {
    const to = recipient('a1', { call_number: '+31631100548', call_number_readable: '+31 6 31100548' });
    for (const kind of ['confirmation', 'reminder', 'announcement'] as const) {
      expect(appointmentEmail(branding, job(kind), to).text, kind).toContain('+31 6 31100548');
      expect(appointmentSms(branding, job(kind), to), kind).toContain('+31 6 31100548');
    }
    // From an identity of the release before (no readable form): the number as it is.
    const { call_number_readable: _readable, ...older } = to;
    expect(appointmentSms(branding, job('confirmation'), older)).toContain('+31631100548');
  });

  it('never lets a name, place or note stored with line breaks start a line of its own', () => {
    const to = recipient('a1', {
      full_name: 'Bob\r\n\r\nURGENT ticket void',
      place: 'Gate 3\nPAY AT http://pay.example',
      note: 'Bring this\r\nURGENT: pay now',
    });
    for (const kind of ['confirmation', 'reminder', 'announcement'] as const) {
      const lines = appointmentEmail(branding, job(kind), to).text.split('\n');
      expect(
        lines.some((line) => /^(URGENT|PAY)/.test(line.trim())),
        kind,
      ).toBe(false);
      expect(appointmentSms(branding, job(kind), to)).not.toMatch(/[\r\n]/);
    }
  });
});
