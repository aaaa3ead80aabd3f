import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AdminAppointment, AppointmentImportResult, CallSheet, MyAppointment } from '@portal/contracts';
import { ApiClient } from '../support/api-client.js';
import { adminClient, confirmAddress, newParticipant, type NewParticipant } from '../support/accounts.js';
import { phoneJpeg, registrationForm } from '../support/media.js';
import { readOutbox, waitForMail } from '../support/outbox.js';
import { startTestPortal, type TestPortal } from '../support/portal.js';

/**
 * A hostile ticket holder, third pass (docs/SECURITY.md): who an appointment reaches, names that
 * look like the administrator's, addresses that hide other addresses, names that write lines into
 * e-mails; and the way back for an honest participant whose confirmation link died.
 */
const ZONE = 'Europe/Berlin';
let portal: TestPortal;
let admin: Awaited<ReturnType<typeof adminClient>>;
let photo: Buffer;

beforeAll(async () => {
  // The abuse limits on, as at a festival: the resend route is counted.
  portal = await startTestPortal({
    EVENT_TIMEZONE: ZONE,
    SMS_DEFAULT_REGION: 'US',
    AUTH_RATE_LIMITS: 'true',
    REGISTER_RATE_LIMIT_PER_MINUTE: '500',
  });
  admin = await adminClient(portal.url);
  photo = await phoneJpeg();
}, 60_000);
afterAll(async () => {
  await portal?.dispose();
});

let counter = 0;
const tag = () => `${Date.now().toString(36)}${++counter}`;

function register(fields: Record<string, string>, client = new ApiClient(portal.url)) {
  return client.postForm('/api/user/register', registrationForm(fields, { bytes: photo }));
}

const confirm = (participant: NewParticipant, count = 1) => confirmAddress(portal.dataDir, participant, count);

const sheetRow = async (date: string, email: string) =>
  ((await admin.client.get(`/api/appointments?date=${date}`)).data as CallSheet).appointments.find((row) => row.email === email);

describe('an appointment reaches only an account that proved the address', () => {
  it("keeps an administrator's appointment pending under an unconfirmed address, whatever the account does", async () => {
    const holder = `holder_${tag()}@example.org`;
    // Mallory registers first with the ticket holder's address, and never confirms it.
    const mallory = await newParticipant(portal.url, { email: holder, phone_number: '2025550166' });
    // The user dialog sets the appointment by the account's address, as POST /api/appointments.
    const set = await admin.client.post('/api/appointments', {
      email: holder,
      start: '2031-07-01T18:30',
      place: 'Gate 3',
      note: 'Code word: owl',
    });
    expect(set.status).toBe(201);
    const appointment = set.data as AdminAppointment;
    expect(appointment).toMatchObject({ user_id: null, full_name: null, verification_photo_url: null, address_status: 'not-confirmed' });
    expect(appointment.phone).toBeNull();

    // Mallory learns nothing: not the place, not the note, not even that one exists.
    const mine = (await mallory.client.get('/api/appointments/mine')).data as MyAppointment;
    expect(mine).toMatchObject({ appointment: null, email_confirmed: false });
    expect((await mallory.client.get('/api/appointments/mine.ics')).status).toBe(404);
    // The call sheet shows no photo, name or number of hers; the user dialog shows it pending.
    expect(await sheetRow('2031-07-01', holder)).toMatchObject({
      user_id: null,
      full_name: null,
      verification_photo_url: null,
      phone: null,
    });
    const dialog = (await admin.client.get(`/api/appointments/user/${mallory.user.id}`)).data as { appointment: AdminAppointment };
    expect(dialog.appointment).toMatchObject({ id: appointment.id, address_status: 'not-confirmed', user_id: null });

    // She moves the account to her own address: the appointment and its messages stay with the holder's.
    const form = new FormData();
    form.append('email', `mallory_${tag()}@example.org`);
    form.append('phone_number', '2025550166');
    form.append('pronouns', '');
    form.append('current_password', mallory.password);
    expect((await mallory.client.putForm('/api/evidence/user', form)).status).toBe(200);
    const after = (await admin.client.get(`/api/appointments/${appointment.id}`)).data as AdminAppointment;
    expect(after).toMatchObject({ email: holder, address_status: 'no-account', user_id: null });
    const moved = await admin.client.request('PATCH', `/api/appointments/${appointment.id}`, { json: { start: '2031-07-01T19:00' } });
    expect(moved.status).toBe(200);
    const confirmations = await waitForMail(portal.dataDir, holder, { subject: /your appointment/i, count: 2, timeoutMs: 30_000 });
    expect(confirmations.to).toContain(holder);
    expect(
      (await readOutbox(portal.dataDir)).filter((mail) => /your appointment/i.test(mail.subject) && !mail.to.includes(holder)),
    ).toEqual([]);

    // Deleting her account erases nothing of the holder's appointment.
    expect((await admin.client.delete(`/api/user/${mallory.user.id}`)).status).toBe(200);
    expect((await admin.client.get(`/api/appointments/${appointment.id}`)).status).toBe(200);

    // The real holder registers with the address and confirms it: now it is theirs, with the number to be called.
    const real = await newParticipant(portal.url, { email: holder, phone_number: '2025550123' });
    expect(((await real.client.get('/api/appointments/mine')).data as MyAppointment).appointment).toBeNull();
    await confirm(real);
    const theirs = (await real.client.get('/api/appointments/mine')).data as MyAppointment;
    expect(theirs).toMatchObject({
      email_confirmed: true,
      appointment: { id: appointment.id, place: 'Gate 3', call_number: '+12025550123', call_number_from: 'profile' },
    });
    const ics = (await real.client.get('/api/appointments/mine.ics')).text.replace(/\r\n /g, '');
    expect(ics).toContain('await a phone call on (202) 555-0123.');
    expect(await sheetRow('2031-07-01', holder)).toMatchObject({
      user_id: real.user.id,
      address_status: 'confirmed',
      phone: '+12025550123',
    });
  }, 120_000);

  it('lets the holder take the appointment to a new address, pending until that one is confirmed too', async () => {
    const first = `first_${tag()}@example.org`;
    const participant = await newParticipant(portal.url, { email: first, phone_number: '2025550177' });
    await confirm(participant);
    const set = await admin.client.post('/api/appointments', { email: first, start: '2031-07-02T18:30', phone: '2025550199' });
    expect(set.data).toMatchObject({ address_status: 'confirmed', user_id: participant.user.id });
    const second = `second_${tag()}@example.org`;
    const form = new FormData();
    form.append('email', second);
    form.append('phone_number', '2025550177');
    form.append('pronouns', '');
    form.append('current_password', participant.password);
    expect((await participant.client.putForm('/api/evidence/user', form)).status).toBe(200);
    const pending = (await admin.client.get(`/api/appointments/${(set.data as AdminAppointment).id}`)).data as AdminAppointment;
    expect(pending).toMatchObject({ email: second, address_status: 'not-confirmed', user_id: null });
    expect(((await participant.client.get('/api/appointments/mine')).data as MyAppointment).appointment).toBeNull();
    participant.user.email = second;
    await confirm(participant);
    expect((await participant.client.get('/api/appointments/mine')).data).toMatchObject({
      appointment: { call_number: '+12025550199', call_number_from: 'box-office' },
    });
  }, 60_000);
});

describe('names that look like the administrator’s', () => {
  it('refuses invisible characters, fullwidth forms, small capitals and mixed scripts, in registration and in the check', async () => {
    const base = `bars_admin${counter}${Date.now() % 1000}`.slice(0, 20);
    expect((await register({ username: base, email: `${base}@example.org` })).status).toBe(201);
    const lookalikes = [
      `${base}\u034F`,
      `${base}\uFE0F`,
      `${base}\u{E0100}`,
      `${base}\u180B`,
      `${base}\u17B4`,
      `${base.slice(0, 5)}\u3164${base.slice(5)}`,
      `${base}\uFFA0`,
      base.replace(/[a-z_0-9]/g, (char) => String.fromCodePoint(char.codePointAt(0)! + 0xfee0)),
      base.replace('a', 'ᴀ'),
      base.replace('a', 'а'),
    ];
    for (const name of lookalikes) {
      const check = await new ApiClient(portal.url).post('/api/user/check', { username: name });
      expect(check.data, JSON.stringify(name)).toMatchObject({ exists: true, field: 'username' });
      const registered = await register({ username: name, email: `x${tag()}@example.org` });
      expect(registered.status, JSON.stringify(name)).toBeGreaterThanOrEqual(400);
      expect(registered.status, JSON.stringify(name)).toBeLessThan(500);
    }
    // The administrators' edit holds to the same rule.
    const someone = await newParticipant(portal.url);
    const edit = await admin.client.put(`/api/user/admin/${someone.user.id}`, {
      username: `${base}\u034F`,
      email: someone.user.email,
      phone_number: '5551234567',
      full_name: 'Some One',
    });
    expect(edit.status).toBe(400);
  }, 60_000);
});

describe('an address is one address', () => {
  it('refuses commas, semicolons, angle brackets and display names everywhere', async () => {
    for (const email of ['a,b@example.org', 'a;b@example.org', '<b@example.org>', 'Bob <b@example.org>', '"a,b"@example.org']) {
      expect((await register({ username: `comma_${tag()}`, email })).status, email).toBe(400);
      expect((await admin.client.post('/api/appointments', { email, start: '2031-07-01T18:30' })).status, email).toBe(400);
    }
    const participant = await newParticipant(portal.url);
    const form = new FormData();
    form.append('email', `x,${participant.user.email}`);
    form.append('phone_number', '5551234567');
    form.append('pronouns', '');
    form.append('current_password', participant.password);
    expect((await participant.client.putForm('/api/evidence/user', form)).status).toBe(400);
    const edit = await admin.client.put(`/api/user/admin/${participant.user.id}`, {
      username: participant.user.username,
      email: 'a,b@example.org',
      phone_number: '5551234567',
      full_name: 'Some One',
    });
    expect(edit.status).toBe(400);
    const csv = new FormData();
    csv.append('file', new Blob(['email,start\n"a,b@example.org",2031-07-01T18:30\n'], { type: 'text/csv' }), 'tickets.csv');
    const imported = (await admin.client.postForm('/api/appointments/import', csv)).data as AppointmentImportResult;
    expect(imported.refused).toMatchObject([{ line: 2, reason: 'bad-email' }]);
  }, 60_000);
});

describe('text that becomes mail', () => {
  it('refuses line breaks and format characters in names, places and notes, and never lets them start a line', async () => {
    const hostile = 'Bob\r\n\r\nURGENT ticket void, pay at http://pay.example';
    expect((await register({ username: `bob_${tag()}`, email: `bob_${tag()}@example.org`, full_name: hostile })).status).toBe(400);
    expect((await register({ username: `bob_${tag()}`, email: `bob_${tag()}@example.org`, full_name: 'Bob\u202Eesrever' })).status).toBe(
      400,
    );
    for (const field of ['place', 'note', 'name'])
      expect(
        (await admin.client.post('/api/appointments', { email: `p_${tag()}@example.org`, start: '2031-07-01T18:30', [field]: 'a\nb' }))
          .status,
      ).toBe(400);
    const csv = new FormData();
    csv.append(
      'file',
      new Blob([`email,start,note\nn_${tag()}@example.org,2031-07-01T18:30,"two\nlines"\n`], { type: 'text/csv' }),
      't.csv',
    );
    const imported = (await admin.client.postForm('/api/appointments/import', csv)).data as AppointmentImportResult;
    expect(imported.refused).toMatchObject([{ line: 2, reason: 'bad-value' }]);
  }, 60_000);

  it('names the number that will be called in the confirmation, by e-mail and in the calendar file, spaced as the screens show it', async () => {
    const participant = await newParticipant(portal.url, { phone_number: '2025550144', full_name: 'Nora Number' });
    await confirm(participant);
    await admin.client.post('/api/appointments', {
      email: participant.user.email,
      start: '2031-07-03T18:30',
      place: 'Corner of Elm and 2nd',
    });
    const mail = await waitForMail(portal.dataDir, participant.user.email, { subject: /your appointment/i, timeoutMs: 30_000 });
    expect(mail.text).toContain('await a phone call on (202) 555-0144.');
    expect(mail.text).toContain('Corner of Elm and 2nd');
    const calendar = (await participant.client.bytes('/api/appointments/mine.ics')).body.toString('utf8').replace(/\r\n /g, '');
    expect(calendar).toContain('await a phone call on (202) 555-0144.');
  }, 60_000);
});

describe('a dead confirmation link can be replaced', () => {
  it('sends a new link to the signed-in account, with limits per account, and none to a confirmed address', async () => {
    const participant = await newParticipant(portal.url);
    expect((await new ApiClient(portal.url).post('/api/user/verify-email/resend')).status).toBe(401);
    const resent = await participant.client.post('/api/user/verify-email/resend');
    expect(resent.status).toBe(202);
    expect(resent.data).toMatchObject({ ok: true, sent: true });
    const mail = await waitForMail(portal.dataDir, participant.user.email, { subject: /confirm/i, count: 2, timeoutMs: 30_000 });
    expect(mail.text).toMatch(/new link/i);
    await confirm(participant, 2);
    const already = await participant.client.post('/api/user/verify-email/resend');
    expect(already.status).toBe(200);
    expect(already.data).toMatchObject({ sent: false });

    const other = await newParticipant(portal.url);
    const answers: number[] = [];
    for (let i = 0; i < 6; i++) answers.push((await other.client.post('/api/user/verify-email/resend')).status);
    expect(answers).toEqual([202, 202, 202, 202, 202, 429]);
  }, 60_000);
});
