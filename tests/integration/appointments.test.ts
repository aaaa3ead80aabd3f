import { randomBytes } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { DateTime } from 'luxon';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AdminAppointment, AnnouncePreview, AppointmentImportResult, AuditEntry, CallSheet, MyAppointment } from '@portal/contracts';
import { SqliteEventBus, SqliteJobQueue, createLogger } from '@portal/platform';
import { waitFor } from '@portal/platform/testing';
import { jobsDatabaseFile } from '@portal/evidence';
import { createNotifier, notifierSettingsFromEnv, type AppointmentJob, type MailJob, type NotifierHandle } from '@portal/notifier';
import { ApiClient } from '../support/api-client.js';
import { adminClient, confirmAddress, newParticipant } from '../support/accounts.js';
import { freePort } from '../support/free-port.js';
import { readOutbox, waitForMail } from '../support/outbox.js';
import { startTestPortal, type TestPortal } from '../support/portal.js';

/**
 * The festival day end to end, in the all-in-one portal: the box office's CSV is imported, a
 * ticket holder gets the confirmation, registers with that address and finds the appointment,
 * reminders arrive by e-mail (.eml in DATA_DIR/outbox) and text (JSON in DATA_DIR/sms-outbox) at
 * the APPOINTMENT_REMINDERS offset (1m, for appointments a little in the future), each once
 * although a second notifier (another process's queue consumer on the same files) works beside
 * the portal's, and the call sheet shows the day with its statuses.
 */
const ZONE = 'Europe/Berlin';
/** PORTAL_TEST_MODE=distributed runs the same flow on the five services (Kafka, MongoDB, BullMQ, MailDev). */
const distributed = process.env.PORTAL_TEST_MODE === 'distributed';
const SECRET = randomBytes(32).toString('base64url');
let portal: TestPortal;
let admin: Awaited<ReturnType<typeof adminClient>>;
let second: { notifier: NotifierHandle; close(): Promise<void> };

beforeAll(async () => {
  const identityPort = await freePort();
  portal = await startTestPortal({
    EVENT_TIMEZONE: ZONE,
    SMS_DEFAULT_REGION: 'US',
    APPOINTMENT_REMINDERS: '1m',
    IDENTITY_PORT: String(identityPort),
    INTERNAL_SECRET: SECRET,
    LIBRARY_ENTRYWAY: 'the entryway of the Test Library',
  });
  admin = await adminClient(portal.url);
  if (distributed) return;
  // A second notifier on the same stores, as a second process (replica) would run it.
  const logger = createLogger({ service: 'notifier-2', level: 'silent' });
  const bus = new SqliteEventBus({ file: join(portal.dataDir, 'bus.sqlite'), logger });
  const mail = new SqliteJobQueue<MailJob>({ file: jobsDatabaseFile(portal.dataDir), queue: 'mail', logger });
  const appointments = new SqliteJobQueue<AppointmentJob>({
    file: jobsDatabaseFile(portal.dataDir),
    queue: 'appointment-messages',
    logger,
  });
  const notifier = createNotifier(
    notifierSettingsFromEnv({
      DATA_DIR: portal.dataDir,
      INTERNAL_SECRET: SECRET,
      IDENTITY_URL: `http://127.0.0.1:${identityPort}`,
      APPOINTMENT_REMINDERS: '1m',
      PRODUCT_NAME: 'Operation Test',
    }),
    { bus, mail, appointments, logger },
  );
  await notifier.start();
  second = {
    notifier,
    close: async () => {
      await notifier.stop();
      await appointments.close();
      await mail.close();
      await bus.close();
    },
  };
}, 60_000);
afterAll(async () => {
  await second?.close();
  await portal?.dispose();
});

interface TextMessage {
  to: string;
  body: string;
  sent_at: string;
  message_id: string;
}
/** The texts in DATA_DIR/sms-outbox (all-in-one), or in the notifier's DATA_DIR (distributed). */
function textMessages(): TextMessage[] {
  return [join(portal.dataDir, 'sms-outbox'), join(portal.dataDir, 'notifier', 'sms-outbox')].flatMap((dir) => {
    try {
      return readdirSync(dir)
        .filter((name) => name.endsWith('.json'))
        .map((name) => JSON.parse(readFileSync(join(dir, name), 'utf8')) as TextMessage);
    } catch {
      return [];
    }
  });
}

/** The ids of an appointment's jobs waiting in the queue (jobs.sqlite, as the notifier keeps them). */
function queuedJobIds(appointmentId: string): string[] {
  const db = new Database(jobsDatabaseFile(portal.dataDir), { readonly: true, fileMustExist: true });
  try {
    return (
      db
        .prepare(`SELECT id FROM jobs WHERE queue = 'appointment-messages' AND id LIKE ? AND state IN ('waiting', 'delayed')`)
        .all(`appointment.${appointmentId}.%`) as { id: string }[]
    ).map((row) => row.id);
  } finally {
    db.close();
  }
}

function csvForm(csv: string, name = 'tickets.csv'): FormData {
  const form = new FormData();
  form.append('file', new Blob([csv], { type: 'text/csv' }), name);
  return form;
}

const local = (dt: DateTime) => dt.setZone(ZONE).toFormat("yyyy-MM-dd'T'HH:mm:ss");

describe('appointments, reminders and the call sheet', () => {
  it('imports, confirms, reminds once by e-mail and text, and shows the day to administrators', async () => {
    const tag = Date.now().toString(36);
    const holder = `holder_${tag}@example.org`;
    const landline = `landline_${tag}@example.org`;
    const others = Array.from({ length: 4 }, (_, index) => `other${index}_${tag}@example.org`);
    // Start in 80 s: the 1m reminder is due in about 20 s. The six appointments (up to 5 s apart)
    // are on one call sheet: a few seconds before the event's midnight, they start just after it.
    const soon = DateTime.now().plus({ seconds: 80 });
    const start = soon.setZone(ZONE).hasSame(soon.plus({ seconds: 5 }).setZone(ZONE), 'day') ? soon : soon.plus({ seconds: 10 });
    const csv = [
      'Email,Start,Phone,Place,Note',
      `${holder},${local(start)},,"Corner of 5th, and Main",`,
      `${landline},${local(start.plus({ seconds: 5 }))},+493012345678,,"Says ""hi"""`,
      `nobody_${tag}@example.org,2026-13-45T10:00,,,`,
      `${holder.toUpperCase()},${local(start)},,,`,
      `extra_${tag}@example.org,${local(start)},,,,surplus`,
      ...others.map((email, index) => `${email},${local(start.plus({ seconds: index }))},(202) 555-01${10 + index},,`),
    ].join('\r\n');
    const imported = await admin.client.postForm('/api/appointments/import', csvForm(csv));
    expect(imported.status).toBe(200);
    const result = imported.data as AppointmentImportResult;
    expect(result.created.map((entry) => entry.line)).toEqual([2, 3, 7, 8, 9, 10]);
    expect(result.refused.map(({ line, reason }) => ({ line, reason }))).toEqual([
      { line: 4, reason: 'bad-date' },
      { line: 5, reason: 'duplicate' },
      { line: 6, reason: 'unknown-column' },
    ]);

    // The confirmation reaches the ticket holder before they have an account.
    const confirmation = await waitForMail(portal.dataDir, holder, { subject: /your appointment/i, timeoutMs: 30_000 });
    expect(confirmation.text).toContain('Corner of 5th, and Main');

    // They register with that address (and the number the reminders go to). Until they confirm
    // the address, the appointment is not theirs: whoever registers first with someone else's
    // address learns nothing of it.
    const participant = await newParticipant(portal.url, { email: holder, phone_number: '2025550123', pronouns: 'She/Her' });
    expect(((await participant.client.get('/api/appointments/mine')).data as MyAppointment).appointment).toBeNull();
    expect((await participant.client.get('/api/appointments/mine.ics')).status).toBe(404);
    const unconfirmed = (
      (await admin.client.get(`/api/appointments?date=${start.setZone(ZONE).toISODate()}`)).data as CallSheet
    ).appointments.find((row) => row.email === holder)!;
    expect(unconfirmed).toMatchObject({ user_id: null, full_name: null, phone: null });
    const welcome = await waitForMail(portal.dataDir, holder, { subject: /confirm/i, timeoutMs: 30_000 });
    const token = /verify-email\?token=([^\s&"<>]+)/.exec(welcome.text)![1]!;
    expect((await participant.client.get(`/api/user/verify-email?token=${token}`)).status).toBe(303);
    const mine = (await participant.client.get('/api/appointments/mine')).data as MyAppointment;
    // Confirmed: their appointment, with the number that will be called (the profile's: the box
    // office gave none), as the call sheet names it, spaced for reading too.
    expect(mine.appointment).toMatchObject({
      time_zone: ZONE,
      place: 'Corner of 5th, and Main',
      version: 1,
      call_number: '+12025550123',
      call_number_readable: '(202) 555-0123',
      call_number_from: 'profile',
    });
    const confirmed = (
      (await admin.client.get(`/api/appointments?date=${start.setZone(ZONE).toISODate()}`)).data as CallSheet
    ).appointments.find((row) => row.email === holder)!;
    expect(confirmed).toMatchObject({
      address_status: 'confirmed',
      call_number: mine.appointment!.call_number,
      call_number_readable: mine.appointment!.call_number_readable,
    });
    expect(Date.parse(mine.appointment!.start)).toBe(Math.floor(start.toMillis() / 1000) * 1000);
    expect(mine.appointment!.start).toMatch(/[+-]\d{2}:\d{2}$/);

    const ics = await participant.client.bytes('/api/appointments/mine.ics');
    expect(ics.status).toBe(200);
    expect(ics.headers.get('content-type')).toMatch(/^text\/calendar/);
    const calendar = ics.body.toString('utf8');
    expect(calendar.endsWith('\r\n')).toBe(true);
    expect(calendar.split('\r\n').every((line) => Buffer.byteLength(line) <= 75)).toBe(true);
    expect(calendar.replace(/\r\n/g, '')).not.toMatch(/[\r\n]/);
    for (const line of [
      'BEGIN:VCALENDAR',
      'VERSION:2.0',
      'BEGIN:VEVENT',
      'BEGIN:VALARM',
      'TRIGGER:-PT1M',
      'END:VALARM',
      'END:VEVENT',
      'END:VCALENDAR',
    ]) {
      expect(calendar).toContain(`${line}\r\n`);
    }
    expect(calendar.replace(/\r\n /g, '')).toContain('LOCATION:Corner of 5th\\, and Main');
    expect(calendar).toMatch(new RegExp(`DTSTART:${start.toUTC().toFormat("yyyyMMdd'T'HHmmss")}Z`));

    // The reminders: by e-mail and by text, each once although two notifiers work the queue.
    const reminder = await waitForMail(portal.dataDir, holder, { subject: /reminder/i, timeoutMs: 90_000 });
    expect(reminder.text).toContain('Corner of 5th, and Main');
    const text = await waitFor(
      () => textMessages().find((message) => message.to === '+12025550123' && /reminder/i.test(message.body)) ?? null,
      {
        timeoutMs: 90_000,
        what: 'the text reminder',
      },
    );
    expect(text.body).toContain('Corner of 5th, and Main');
    const othersSheet = await waitFor(
      async () => {
        const sheet = (await admin.client.get(`/api/appointments?date=${start.setZone(ZONE).toISODate()}`)).data as CallSheet;
        const mineOnSheet = sheet.appointments.filter((entry) => [holder, ...others].includes(entry.email));
        const done = mineOnSheet.every((entry) =>
          ['1m:email', '1m:sms'].every((key) => entry.deliveries.some((delivery) => delivery.key === key && delivery.state === 'sent')),
        );
        const landlineDone = sheet.appointments.some(
          (entry) => entry.email === landline && entry.deliveries.some((delivery) => delivery.key === '1m:sms'),
        );
        return done && landlineDone && mineOnSheet.length === 5 ? sheet : null;
      },
      { timeoutMs: 90_000, what: 'every reminder recorded as sent' },
    );
    // Settle: a duplicate would have been written by now.
    await new Promise((resolve) => setTimeout(resolve, 1500));
    const mails = await readOutbox(portal.dataDir);
    for (const email of [holder, ...others]) {
      expect(mails.filter((mail) => mail.to.includes(email) && /reminder/i.test(mail.subject))).toHaveLength(1);
    }
    const reminderTexts = textMessages().filter((message) => /reminder/i.test(message.body));
    expect(new Set(reminderTexts.map((message) => message.message_id)).size).toBe(reminderTexts.length);
    for (const phone of ['+12025550123', '+12025550110', '+12025550111', '+12025550112', '+12025550113']) {
      expect(reminderTexts.filter((message) => message.to === phone)).toHaveLength(1);
    }

    // The call sheet: time order, who to recognise, the number to call, what was sent.
    const sheet = othersSheet;
    const starts = sheet.appointments.map((entry) => Date.parse(entry.start));
    expect([...starts].sort((a, b) => a - b)).toEqual(starts);
    const entry = sheet.appointments.find((candidate) => candidate.email === holder)!;
    expect(entry).toMatchObject({
      full_name: 'Ida Informant',
      pronouns: 'She/Her',
      phone: '+12025550123',
      phone_problem: null,
      status: 'waiting',
    });
    expect(entry.verification_photo_url).toMatch(/^\/api\/user\/.+\/verification-photo/);
    const fixed = sheet.appointments.find((candidate) => candidate.email === landline)!;
    expect(fixed.phone).toBeNull();
    expect(fixed.phone_problem).toMatch(/fixed line/);
    expect(fixed.deliveries.find((delivery) => delivery.key === '1m:sms')).toMatchObject({ state: 'not-sent' });

    // The performers' status, seen by every administrator.
    const called = await admin.client.request('PATCH', `/api/appointments/${entry.id}`, { json: { status: 'arrived' } });
    expect(called.status).toBe(200);
    const otherAdmin = await adminClient(portal.url);
    const seen = (await otherAdmin.client.get(`/api/appointments/${entry.id}`)).data as AdminAppointment;
    expect(seen.status).toBe('arrived');
    const badStatus = await admin.client.request('PATCH', `/api/appointments/${entry.id}`, { json: { status: 'gone' } });
    expect(badStatus.status).toBe(400);
    expect(badStatus.data.message).toMatch(/status must be one of/);

    // Only administrators read the call sheet and others' numbers.
    expect((await participant.client.get(`/api/appointments?date=${start.setZone(ZONE).toISODate()}`)).status).toBe(403);
    expect((await participant.client.get(`/api/appointments/${fixed.id}`)).status).toBe(403);
    expect((await new ApiClient(portal.url).get('/api/appointments/mine')).status).toBe(401);

    // Every change and the import are in the audit log.
    const audit = async (action: string) => ((await admin.client.get(`/api/admin/activity?action=${action}`)).data as AuditEntry[]) ?? [];
    await waitFor(async () => (await audit('appointment.import')).find((row) => row.details?.created === 6) ?? null, {
      what: 'the import in the audit log',
    });
    await waitFor(async () => (await audit('appointment.status')).find((row) => row.target_id === entry.id) ?? null, {
      what: 'the status change in the audit log',
    });
  }, 240_000);

  it('refuses a file with an unknown column, moves and cancels one appointment, and announces bad weather', async () => {
    const refused = await admin.client.postForm(
      '/api/appointments/import',
      csvForm('email,start,seat\nx@example.org,2030-07-01T18:30,12\n'),
    );
    expect(refused.status).toBe(200);
    expect((refused.data as AppointmentImportResult).refused).toEqual([
      { line: 1, reason: 'unknown-column', message: expect.stringContaining('"seat"') },
    ]);
    const noFile = await admin.client.postForm('/api/appointments/import', new FormData());
    expect(noFile.status).toBe(400);

    const tag = Date.now().toString(36);
    const email = `moved_${tag}@example.org`;
    const created = await admin.client.post('/api/appointments', { email, start: '2030-07-01T18:30', phone: '2025550140', name: 'Mo Ved' });
    expect(created.status).toBe(201);
    const appointment = created.data as AdminAppointment;
    expect(appointment.start).toBe('2030-07-01T18:30:00.000+02:00');
    expect(appointment.phone).toBe('+12025550140');
    // The box office's name, as the CSV's name column gives it, for a ticket holder without an account.
    expect(appointment.name).toBe('Mo Ved');
    await waitForMail(portal.dataDir, email, { subject: /your appointment/i, timeoutMs: 30_000 });

    const moved = await admin.client.request('PATCH', `/api/appointments/${appointment.id}`, { json: { start: '2030-07-02T19:00+02:00' } });
    expect(moved.status).toBe(200);
    expect(moved.data).toMatchObject({ version: 2, start: '2030-07-02T19:00:00.000+02:00' });
    await waitForMail(portal.dataDir, email, { count: 2, subject: /your appointment/i, timeoutMs: 30_000 });
    const badStart = await admin.client.request('PATCH', `/api/appointments/${appointment.id}`, { json: { start: 'tomorrow' } });
    expect(badStart.status).toBe(400);
    // The name corrected, the start not moved (the version stays); an empty name takes it away.
    const renamed = await admin.client.request('PATCH', `/api/appointments/${appointment.id}`, { json: { name: 'Mo Ving' } });
    expect(renamed.status).toBe(200);
    expect(renamed.data).toMatchObject({ version: 2, name: 'Mo Ving' });
    const unnamed = await admin.client.request('PATCH', `/api/appointments/${appointment.id}`, { json: { name: '' } });
    expect(unnamed.data).toMatchObject({ version: 2, name: null });

    const announced = await admin.client.post('/api/appointments/announce', { date: '2030-07-02', text: 'bad-weather' });
    expect(announced.status).toBe(202);
    expect(announced.data).toMatchObject({ recipients: 1 });
    expect(announced.data.message).toContain('the entryway of the Test Library');
    const notice = await waitForMail(portal.dataDir, email, { subject: /a message about your appointment/i, timeoutMs: 30_000 });
    expect(notice.text).toContain('the entryway of the Test Library');
    await waitFor(() => textMessages().find((message) => message.to === '+12025550140' && message.body.includes('Test Library')) ?? null, {
      what: 'the announcement by text',
    });
    expect((await admin.client.post('/api/appointments/announce', { date: '2030-07-02' })).status).toBe(400);

    // The move took the first version's reminders out of the queue and queued the second's.
    if (!distributed)
      await waitFor(
        () => {
          const ids = queuedJobIds(appointment.id);
          return ids.some((id) => id.includes('.v2.1m.email')) && !ids.some((id) => id.includes('.v1.')) ? ids : null;
        },
        { what: "the moved appointment's reminders" },
      );

    expect((await admin.client.delete(`/api/appointments/${appointment.id}`)).status).toBe(200);
    expect((await admin.client.get(`/api/appointments/${appointment.id}`)).status).toBe(404);
    // The cancellation took its reminders out of the queue.
    if (!distributed)
      await waitFor(() => (queuedJobIds(appointment.id).length === 0 ? true : null), {
        what: "the cancelled appointment's reminders to go",
      });
  }, 120_000);

  it('sends no text to a participant who turned text reminders off, and says so on the call sheet', async () => {
    const participant = await newParticipant(portal.url, { phone_number: '2025550188' });
    // The appointment is theirs (their opt-out, their number) once they confirmed the address.
    await confirmAddress(portal.dataDir, participant);
    const form = new FormData();
    form.append('email', participant.user.email);
    form.append('phone_number', '2025550188');
    form.append('pronouns', 'They/Them');
    form.append('sms_reminders', 'false');
    const profile = await participant.client.putForm('/api/evidence/user', form);
    expect(profile.status).toBe(200);
    expect(profile.data.sms_reminders).toBe(false);
    const created = await admin.client.post('/api/appointments', { email: participant.user.email, start: '2030-07-03T18:30' });
    expect(created.status).toBe(201);
    const id = (created.data as AdminAppointment).id;
    await waitForMail(portal.dataDir, participant.user.email, { subject: /your appointment/i, timeoutMs: 30_000 });
    const record = await waitFor(
      async () =>
        ((await admin.client.get(`/api/appointments/${id}`)).data as AdminAppointment).deliveries.find(
          (delivery) => delivery.key === 'confirmation:sms',
        ) ?? null,
      { what: 'the text confirmation record' },
    );
    expect(record).toMatchObject({ state: 'not-sent', reason: expect.stringMatching(/turned text reminders off/) });
    expect(textMessages().some((message) => message.to === '+12025550188')).toBe(false);
    // An announcement to that day counts them by e-mail only.
    const reach = await admin.client.post('/api/appointments/announce?dry_run=true', { date: '2030-07-03' });
    expect(reach.data).toMatchObject({ recipients: 1, by_text: 0 });
    expect(((await participant.client.get('/api/appointments/mine')).data as MyAppointment).sms_reminders).toBe(false);
  }, 60_000);

  it('previews an import (dry run) exactly as it then imports, names who is pending, keeps a landline to call, and counts whom an announcement reaches', async () => {
    const tag = `${Date.now().toString(36)}${Math.random().toString(36).slice(2, 6)}`;
    const day = '2032-05-05';
    const [moving, renamed, same, added, landline] = ['moving', 'renamed', 'same', 'added', 'landline'].map(
      (who) => `${who}_${tag}@example.org`,
    );
    const first = await admin.client.postForm(
      '/api/appointments/import',
      csvForm(
        ['email,start,name,place', `${moving},${day}T18:00,Mo Ving,`, `${renamed},${day}T18:10,Ren Amed,`, `${same},${day}T18:20,,`].join(
          '\n',
        ),
      ),
    );
    expect((first.data as AppointmentImportResult).created).toHaveLength(3);

    const csv = [
      'Name,Email,Start,Phone,Place',
      `Mo Ving,${moving},${day}T19:00,,`,
      `Ren Amed-Longer,${renamed},${day}T18:10,,`,
      `,${same},${day}T18:20,,`,
      `Zoë Ñúñez-Añadida,${added},${day}T18:30,2025550177,Gate 3`,
      `Lena Landline,${landline},${day}T18:40,+49 30 12345678,`,
      `No Body,nobody_${tag}@example.org,${day}T25:00,,`,
      // A name of two lines (a quoted cell spanning lines 8 and 9) and a time the autumn night repeats:
      // the dry run reads by the import's own rules.
      `"Two\nLines",twolines_${tag}@example.org,${day}T18:50,,`,
      `Au Tumn,autumn_${tag}@example.org,2032-10-31T02:30,,`,
    ].join('\n');
    const sheetOfDay = async () => ((await admin.client.get(`/api/appointments?date=${day}`)).data as CallSheet).appointments;
    // What an import changes (the notifier meanwhile records the first imports' messages).
    const appointmentsOfDay = async () =>
      (await sheetOfDay()).map(({ id, email, start, version, name, place, note, call_number }) => ({
        id,
        email,
        start,
        version,
        name,
        place,
        note,
        call_number,
      }));
    const audited = async () =>
      (((await admin.client.get('/api/admin/activity?action=appointment.import')).data as AuditEntry[]) ?? []).length;
    const before = await appointmentsOfDay();
    const auditBefore = await audited();

    const preview = await admin.client.postForm('/api/appointments/import?dry_run=true', csvForm(csv));
    expect(preview.status).toBe(200);
    const dry = preview.data as AppointmentImportResult;
    expect(dry).toMatchObject({ dry_run: true, time_zone: ZONE });
    expect(dry.created).toEqual([
      { line: 5, email: added, id: null, name: 'Zoë Ñúñez-Añadida', start: `${day}T18:30:00.000+02:00` },
      { line: 6, email: landline, id: null, name: 'Lena Landline', start: `${day}T18:40:00.000+02:00` },
    ]);
    expect(dry.updated.map(({ line, moved, previous_start, start }) => ({ line, moved, previous_start, start }))).toEqual([
      { line: 2, moved: true, previous_start: `${day}T18:00:00.000+02:00`, start: `${day}T19:00:00.000+02:00` },
      { line: 3, moved: false, previous_start: `${day}T18:10:00.000+02:00`, start: `${day}T18:10:00.000+02:00` },
    ]);
    expect(dry.unchanged.map((entry) => entry.line)).toEqual([4]);
    expect(dry.refused).toEqual([
      { line: 7, reason: 'bad-date', message: expect.stringContaining('25:00') },
      { line: 8, reason: 'bad-value', message: expect.stringContaining('The name must be one line of text') },
      { line: 10, reason: 'ambiguous-time', message: expect.stringContaining('happens twice') },
    ]);
    // Nothing was written: the day is as it was (and, below, the audit log has only the real import).
    expect(await appointmentsOfDay()).toEqual(before);
    expect((await admin.client.postForm('/api/appointments/import?dry_run=maybe', csvForm(csv))).status).toBe(400);

    // The import does what the preview said, line by line.
    const imported = (await admin.client.postForm('/api/appointments/import', csvForm(csv))).data as AppointmentImportResult;
    const withoutIds = (result: AppointmentImportResult) => ({
      created: result.created.map(({ id: _id, ...rest }) => rest),
      updated: result.updated,
      unchanged: result.unchanged,
      refused: result.refused,
    });
    expect(imported.dry_run).toBe(false);
    expect(imported.created.every((entry) => typeof entry.id === 'string')).toBe(true);
    expect(withoutIds(imported)).toEqual(withoutIds(dry));
    await waitFor(async () => ((await audited()) > auditBefore ? true : null), { what: 'the import in the audit log' });
    await new Promise((resolve) => setTimeout(resolve, 1000));
    expect(await audited()).toBe(auditBefore + 1);

    // Pending ticket holders show as who the box office says they are; a landline can be called but not texted.
    const sheet = await sheetOfDay();
    const pending = sheet.find((entry) => entry.email === added)!;
    expect(pending).toMatchObject({
      user_id: null,
      full_name: null,
      address_status: 'no-account',
      name: 'Zoë Ñúñez-Añadida',
      place: 'Gate 3',
    });
    expect(sheet.find((entry) => entry.email === renamed)!.name).toBe('Ren Amed-Longer');
    expect(sheet.find((entry) => entry.email === same)!.name).toBeNull();
    expect(sheet.find((entry) => entry.email === landline)).toMatchObject({
      phone: null,
      call_number: '+493012345678',
      call_number_readable: '+49 30 12345678',
      phone_problem: expect.stringMatching(/not a mobile number/),
    });

    // Without a day, the call sheet is today's in EVENT_TIMEZONE.
    const today = (await admin.client.get('/api/appointments')).data as CallSheet;
    expect(today).toMatchObject({ date: DateTime.now().setZone(ZONE).toISODate(), time_zone: ZONE });

    // An announcement's reach, counted by the same selection it is sent to, nothing sent.
    const announceAudits = async () =>
      (((await admin.client.get('/api/admin/activity?action=appointment.announce')).data as AuditEntry[]) ?? []).length;
    const announcedBefore = await announceAudits();
    const count = await admin.client.post('/api/appointments/announce?dry_run=true', { date: day, from: '18:15', to: '18:45' });
    expect(count.status).toBe(200);
    // Each by e-mail; by text only who can take one: the mobile number the box office gave (not
    // the landline, and not who has no number), as the notifier decides it.
    expect(count.data as AnnouncePreview).toEqual({
      dry_run: true,
      recipients: 3,
      by_text: 1,
      message: null,
      from: `${day}T18:15:00.000+02:00`,
      to: `${day}T18:45:00.000+02:00`,
      time_zone: ZONE,
    });
    const words = (await admin.client.post('/api/appointments/announce?dry_run=true', { date: day, text: 'bad-weather' }))
      .data as AnnouncePreview;
    expect(words).toMatchObject({ recipients: 5, by_text: 1, message: expect.stringContaining('the entryway of the Test Library') });
    expect((await admin.client.post('/api/appointments/announce?dry_run=true', { date: day, from: '19:00', to: '18:00' })).status).toBe(
      400,
    );
    const sent = await admin.client.post('/api/appointments/announce', {
      date: day,
      from: '18:15',
      to: '18:45',
      message: 'Gate 3 only today',
    });
    expect(sent.status).toBe(202);
    expect(sent.data).toMatchObject({ recipients: 3, by_text: 1 });
    // Only the announcement sent is in the audit log, not the dry runs before it.
    await waitFor(async () => ((await announceAudits()) > announcedBefore ? true : null), { what: 'the announcement in the audit log' });
    await new Promise((resolve) => setTimeout(resolve, 1000));
    expect(await announceAudits()).toBe(announcedBefore + 1);
  }, 60_000);
});
