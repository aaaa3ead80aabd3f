import { randomUUID } from 'node:crypto';
import {
  TOPICS,
  asOneLine,
  type AdminAppointment,
  type AnnouncePreview,
  type AnnouncePreviewRequest,
  type AnnounceRequest,
  type AnnounceResult,
  type Appointment,
  type AppointmentCreate,
  type AppointmentImportResult,
  type AppointmentRecipient,
  type AppointmentUpdate,
  type CallSheet,
  type DeliveryReport,
  type MyAppointment,
  whyNoText,
} from '@portal/contracts';
import {
  auditEvent,
  badRequest,
  conflict,
  createEvent,
  notFound,
  unauthenticated,
  TimeSlices,
  type CallerIdentity,
  type Logger,
} from '@portal/platform';
import { DuplicateAppointmentError, type AppointmentRecord, type AppointmentStore } from '../repositories/appointment-store.js';
import type { PendingEvent, UserRepository } from '../repositories/user-repository.js';
import { readAppointmentCsv, type CsvAppointment } from './appointment-csv.js';
import { dayBounds, dayIn, inZone, readStart } from './appointment-times.js';
import { calendarFile } from './icalendar.js';
import { appointmentPhone, type AppointmentPhone } from './phone-numbers.js';
import { verificationPhotoUrl, type UserRecord } from './user-record.js';

export interface AppointmentSettings {
  /** EVENT_TIMEZONE: times without an offset are read here; days of the call sheet are its days. */
  timeZone: string;
  /** SMS_DEFAULT_REGION: numbers without a country code are read here. */
  smsRegion: string;
  /** The place of an appointment imported without one (STREET_CORNER). */
  defaultPlace: string;
  /** Named by the ready bad-weather text (LIBRARY_ENTRYWAY). */
  libraryEntryway: string;
  productName: string;
  /** The smallest reminder offset (minutes): the calendar file's alarm. */
  alarmMinutesBefore: number;
  /** How long an appointment lasts in calendars. */
  durationMinutes: number;
}

export interface AppointmentServiceDeps {
  store: AppointmentStore;
  users: Pick<UserRepository, 'findById' | 'findByEmail' | 'findByEmails' | 'appendEvents'>;
  settings: AppointmentSettings;
  logger: Logger;
  onEventsCommitted: () => void;
  clock?: () => number;
}

type Actor = CallerIdentity;

/** What importing one line of the CSV does (the same plan for a dry run and for the import). */
type ImportPlan =
  | { kind: 'created'; next: AppointmentRecord }
  | { kind: 'updated'; existing: AppointmentRecord; next: AppointmentRecord }
  | { kind: 'unchanged'; existing: AppointmentRecord };

/** The ready texts of announcements. */
export function readyText(text: 'bad-weather', settings: Pick<AppointmentSettings, 'libraryEntryway' | 'productName'>): string {
  if (text === 'bad-weather') {
    return `${settings.productName}: because of bad weather, please wait in ${settings.libraryEntryway} instead of at your appointment's place. Keep your phone at hand: we will call you at your time.`;
  }
  throw new Error(`unknown ready text ${String(text)}`);
}

/**
 * Appointments: imported from the box office's CSV or set one by one by administrators, read by
 * their participant (and as a calendar file), listed as the day's call sheet. Every change is
 * written with the events that announce it (the notifier schedules the confirmation and reminders
 * from them) and with its audit entry.
 */
export class AppointmentService {
  private readonly clock: () => number;

  constructor(private readonly deps: AppointmentServiceDeps) {
    this.clock = deps.clock ?? Date.now;
  }

  get settings(): AppointmentSettings {
    return this.deps.settings;
  }

  // --- administrators ----------------------------------------------------------------------

  /**
   * Imports the box office's CSV, or with `dryRun` answers what the import would do (the same
   * reading and the same decision per line, nothing written, no audit entry). Either way it is read
   * and planned in slices: a festival's file (thousands of lines) never holds the process long;
   * every other request is answered between two slices (bench/import).
   */
  async importCsv(
    caller: Actor,
    text: string,
    fileName: string,
    { dryRun = false }: { dryRun?: boolean } = {},
  ): Promise<AppointmentImportResult> {
    const zone = this.deps.settings.timeZone;
    const slices = new TimeSlices();
    const { rows, refused } = await readAppointmentCsv(text, zone, this.clock(), slices);
    const result: AppointmentImportResult = { dry_run: dryRun, time_zone: zone, created: [], updated: [], unchanged: [], refused };
    for (const row of rows) {
      await slices.maybeYield();
      const outcome = await (dryRun ? this.planRow(row) : this.applyRow(row)).catch((error: unknown) => {
        if (error instanceof DuplicateAppointmentError) return 'duplicate' as const;
        throw error;
      });
      if (outcome === 'duplicate') {
        result.refused.push({
          line: row.line,
          reason: 'duplicate',
          message: `${row.email} was given an appointment by someone else meanwhile; import the file again`,
        });
        continue;
      }
      const line = { line: row.line, email: row.email, name: row.name ?? '', start: inZone(row.start, zone) };
      if (outcome.kind === 'created') result.created.push({ ...line, id: dryRun ? null : outcome.next.id });
      else if (outcome.kind === 'unchanged') result.unchanged.push({ ...line, id: outcome.existing.id });
      else
        result.updated.push({
          ...line,
          id: outcome.existing.id,
          moved: outcome.next.start !== outcome.existing.start,
          previous_start: inZone(outcome.existing.start, zone),
        });
    }
    result.refused.sort((a, b) => a.line - b.line);
    if (dryRun) return result;
    await this.deps.users.appendEvents([
      auditEvent({
        actor: caller,
        action: 'appointment.import',
        target: { type: 'appointment', id: null, label: fileName.slice(0, 200) || 'appointments.csv' },
        details: {
          created: result.created.length,
          updated: result.updated.length,
          unchanged: result.unchanged.length,
          refused: result.refused.length,
        },
      }),
    ]);
    this.deps.onEventsCommitted();
    this.deps.logger.info(
      { created: result.created.length, updated: result.updated.length, refused: result.refused.length },
      'appointments imported',
    );
    return result;
  }

  /** One appointment: a new one for the address, or the address's existing one moved. */
  async create(caller: Actor, input: AppointmentCreate): Promise<{ appointment: AdminAppointment; created: boolean }> {
    const start = this.startOf(input.start);
    const existing = await this.deps.store.findByEmail(input.email);
    if (existing) {
      const moved = await this.change(caller, existing, { ...input, start });
      return { appointment: await this.adminView(moved), created: false };
    }
    // Kept under the address, as an imported one is: it is an account's only while that account
    // has confirmed the address (holderOf), whatever screen it was set from.
    const record = this.newRecord({
      email: input.email,
      start,
      name: input.name,
      phone: input.phone,
      place: input.place,
      note: input.note,
    });
    try {
      await this.deps.store.create(record, [
        this.scheduledEvent(record, 'set'),
        auditEvent({
          actor: caller,
          action: 'appointment.create',
          ...(await this.auditAbout(record)),
          after: auditSnapshot(record),
        }),
      ]);
    } catch (error) {
      if (error instanceof DuplicateAppointmentError)
        throw conflict('This address was given an appointment meanwhile: reload and move that one');
      throw error;
    }
    this.deps.onEventsCommitted();
    return { appointment: await this.adminView(record), created: true };
  }

  async update(caller: Actor, id: string, input: AppointmentUpdate): Promise<AdminAppointment> {
    let record = await this.require(id);
    if (input.status !== undefined && input.status !== record.status) {
      const at = new Date(this.clock()).toISOString();
      const updated = await this.deps.store.setStatus(id, input.status, at, [
        auditEvent({
          actor: caller,
          action: 'appointment.status',
          ...(await this.auditAbout(record)),
          before: { status: record.status },
          after: { status: input.status },
        }),
      ]);
      if (!updated) throw notFound('No such appointment');
      record = updated;
      this.deps.onEventsCommitted();
    }
    const { status: _status, ...rest } = input;
    if (Object.values(rest).some((value) => value !== undefined)) {
      record = await this.change(caller, record, { ...rest, ...(rest.start !== undefined ? { start: this.startOf(rest.start) } : {}) });
    }
    return this.adminView(record);
  }

  async cancel(caller: Actor, id: string): Promise<void> {
    const record = await this.require(id);
    const deleted = await this.deps.store.delete(id, [
      this.cancelledEvent(record, false),
      auditEvent({
        actor: caller,
        action: 'appointment.cancel',
        ...(await this.auditAbout(record)),
        before: auditSnapshot(record),
      }),
    ]);
    if (!deleted) throw notFound('No such appointment');
    this.deps.onEventsCommitted();
  }

  async get(id: string): Promise<AdminAppointment> {
    return this.adminView(await this.require(id));
  }

  /**
   * The appointment under an account's address (the user dialog), or null; until the account has
   * confirmed the address it is shown as pending (`address_status`), with nothing of the account.
   */
  async ofUser(userId: string): Promise<AdminAppointment | null> {
    const user = await this.deps.users.findById(userId);
    if (!user) throw notFound('No such user');
    const record = await this.deps.store.findByEmail(user.email);
    return record ? this.adminView(record) : null;
  }

  /** A day's call sheet; without a day, today's in EVENT_TIMEZONE (whatever the performer's phone says). */
  async callSheet(day?: string): Promise<CallSheet> {
    const date = day ?? dayIn(this.clock(), this.deps.settings.timeZone);
    const { from, to } = dayBounds(date, this.deps.settings.timeZone);
    const records = await this.deps.store.listBetween(from, to);
    const accounts = await this.accountsOf(records);
    return {
      date,
      time_zone: this.deps.settings.timeZone,
      appointment_minutes: this.deps.settings.durationMinutes,
      appointments: records.map((record) => this.adminViewOf(record, accounts.get(record.email.toLowerCase()) ?? null)),
    };
  }

  async announce(caller: Actor, request: AnnounceRequest): Promise<AnnounceResult> {
    const message = this.announcementText(request)!;
    const { records } = await this.announcementSelection(request);
    const id = randomUUID();
    await this.deps.users.appendEvents([
      {
        topic: TOPICS.appointments,
        event: createEvent({
          type: 'appointment.announced',
          key: id,
          data: {
            announcementId: id,
            message,
            appointments: records.map((record) => ({ appointmentId: record.id, version: record.version })),
          },
        }),
      },
      auditEvent({
        actor: caller,
        action: 'appointment.announce',
        target: {
          type: 'appointment',
          id: null,
          label: `${request.date}${request.from ? ` from ${request.from}` : ''}${request.to ? ` to ${request.to}` : ''}`,
        },
        details: {
          date: request.date,
          from: request.from ?? null,
          to: request.to ?? null,
          text: request.text ?? null,
          message,
          recipients: records.length,
        },
      }),
    ]);
    this.deps.onEventsCommitted();
    return { id, recipients: records.length, by_text: await this.countByText(records), message };
  }

  /** What an announcement would do (the dry run): whom the same selection reaches, and the words. */
  async previewAnnouncement(request: AnnouncePreviewRequest): Promise<AnnouncePreview> {
    const { records, from, to } = await this.announcementSelection(request);
    const { timeZone } = this.deps.settings;
    return {
      dry_run: true,
      recipients: records.length,
      by_text: await this.countByText(records),
      message: this.announcementText(request),
      from: inZone(from, timeZone),
      to: inZone(to, timeZone),
      time_zone: timeZone,
    };
  }

  /** How many of these appointments' holders a text can reach, by the notifier's own rule (whyNoText). */
  private async countByText(records: AppointmentRecord[]): Promise<number> {
    const accounts = await this.accountsOf(records);
    return records.filter((record) => {
      const user = confirmedHolder(accounts.get(record.email.toLowerCase()) ?? null);
      return whyNoText(textFields(this.phoneOf(record, user), user)) === null;
    }).length;
  }

  private announcementText(request: Pick<AnnouncePreviewRequest, 'message' | 'text'>): string | null {
    return request.message ?? (request.text ? readyText(request.text, this.deps.settings) : null);
  }

  /** The appointments an announcement reaches: those of the day, or of the time range of it ([from, to), UTC). */
  private async announcementSelection(
    request: AnnouncePreviewRequest,
  ): Promise<{ records: AppointmentRecord[]; from: string; to: string }> {
    if (request.from && request.to && request.from >= request.to)
      throw badRequest('from must be before to', { from: 'from must be before to' });
    const { from, to } = dayBounds(request.date, this.deps.settings.timeZone, request.from, request.to);
    return { records: await this.deps.store.listBetween(from, to), from, to };
  }

  // --- the participant -----------------------------------------------------------------------

  /**
   * The caller's appointment: the one under their address, once they confirmed it. Until then the
   * answer says only that the address is not confirmed, never whether an appointment waits there.
   */
  async mine(caller: Pick<CallerIdentity, 'userId'>): Promise<MyAppointment> {
    const user = await this.deps.users.findById(caller.userId);
    if (!user) throw unauthenticated();
    const record = await this.recordOf(user);
    return {
      appointment: record ? this.participantView(record, this.phoneOf(record, user)) : null,
      sms_reminders: user.sms_reminders,
      email_confirmed: user.email_verified,
    };
  }

  async mineCalendar(caller: Pick<CallerIdentity, 'userId'>, host: string): Promise<string | null> {
    const user = await this.deps.users.findById(caller.userId);
    if (!user) throw unauthenticated();
    const record = await this.recordOf(user);
    if (!record) return null;
    const { settings } = this.deps;
    const call = this.phoneOf(record, user);
    return calendarFile(
      {
        uid: `${record.id}@${host}`,
        sequence: record.version - 1,
        start: record.start,
        minutes: settings.durationMinutes,
        summary: `${settings.productName}: your appointment`,
        location: record.place,
        description: [
          `Stand at ${asOneLine(record.place)} and await a phone call on ${call.readable ?? 'the number you gave at registration'}.`,
          `In bad weather wait in ${settings.libraryEntryway}.`,
          record.note ? `Note: ${asOneLine(record.note)}` : '',
        ]
          .filter((line) => line)
          .join('\n'),
        alarmMinutesBefore: settings.alarmMinutesBefore,
        stamp: record.updated_at,
      },
      `-//${settings.productName}//Appointments//EN`,
    );
  }

  // --- the notifier (internal routes) ----------------------------------------------------------

  async recipient(id: string): Promise<AppointmentRecipient | null> {
    const record = await this.deps.store.findById(id);
    if (!record) return null;
    const user = await this.holderOf(record);
    const phone = this.phoneOf(record, user);
    return {
      ...textFields(phone, user),
      appointmentId: record.id,
      version: record.version,
      start: record.start,
      time_zone: record.time_zone,
      place: record.place,
      note: record.note,
      // The address the appointment was given to, always: an account moves it only by confirming another (followAddress).
      email: record.email,
      user_id: user?.id ?? null,
      full_name: user?.full_name ?? null,
      call_number: phone.toCall,
      call_number_readable: phone.readable,
      sent: record.deliveries.filter((delivery) => delivery.state === 'sent').map((delivery) => delivery.key),
    };
  }

  async recordDelivery(id: string, report: DeliveryReport): Promise<boolean> {
    return this.deps.store.recordDelivery(id, report.version, {
      key: report.key,
      kind: report.kind,
      offset: report.offset,
      channel: report.channel,
      state: report.state,
      reason: report.reason,
      at: new Date(this.clock()).toISOString(),
    });
  }

  // --- privacy -----------------------------------------------------------------------------------

  /** The participant's appointment for their data export (null when none). */
  async forExport(user: UserRecord): Promise<AdminAppointment | null> {
    const record = await this.recordOf(user);
    return record ? this.adminView(record, user) : null;
  }

  /**
   * Removes the appointment (and with it its message records) of a deleted account: the one under
   * its address if it had confirmed the address. An account that never did held nothing of it:
   * the ticket holder's appointment stays under their address.
   */
  async erase(user: Pick<UserRecord, 'id' | 'email' | 'email_verified'>): Promise<number> {
    const record = await this.recordOf(user);
    if (!record || !(await this.deps.store.delete(record.id, [this.cancelledEvent(record, true)]))) return 0;
    this.deps.onEventsCommitted();
    this.deps.logger.info({ userId: user.id, appointments: 1 }, "erased a deleted account's appointment");
    return 1;
  }

  /**
   * An account's address changed (its owner, with the password, or an administrator). The
   * appointment under the old address follows it only if the account had confirmed that address
   * (it was the ticket holder's); it is then pending under the new one until that one is
   * confirmed too. Any other account's change moves nothing: whoever registered with a ticket
   * holder's address without confirming it cannot take the appointment (or its messages) along.
   * When the new address already has an appointment of its own, the old one stays where it is.
   */
  async followAddress(before: Pick<UserRecord, 'id' | 'email' | 'email_verified'>, after: Pick<UserRecord, 'email'>): Promise<void> {
    if (!before.email_verified || before.email.toLowerCase() === after.email.toLowerCase()) return;
    const record = await this.deps.store.findByEmail(before.email);
    if (!record) return;
    const moved = { ...record, email: after.email.toLowerCase(), updated_at: new Date(this.clock()).toISOString() };
    try {
      if (await this.deps.store.replace(moved, record.version, [])) {
        this.deps.logger.info({ userId: before.id, appointmentId: record.id }, "an appointment followed its holder's new address");
        return;
      }
    } catch (error) {
      if (!(error instanceof DuplicateAppointmentError)) throw error;
    }
    this.deps.logger.warn({ userId: before.id, appointmentId: record.id }, "an appointment stayed under its holder's previous address");
  }

  // --- inside ------------------------------------------------------------------------------------

  /** What importing one line does: a new appointment, the address's one changed, or nothing. */
  private async planRow(row: CsvAppointment): Promise<ImportPlan> {
    const existing = await this.deps.store.findByEmail(row.email);
    if (!existing) return { kind: 'created', next: this.newRecord(row) };
    const next = this.withChanges(existing, row);
    return next ? { kind: 'updated', existing, next } : { kind: 'unchanged', existing };
  }

  /** Imports one line: its plan, written. */
  private async applyRow(row: CsvAppointment): Promise<ImportPlan> {
    const plan = await this.planRow(row);
    if (plan.kind === 'created') {
      await this.deps.store.create(plan.next, [this.scheduledEvent(plan.next, 'set')]);
    } else if (plan.kind === 'updated') {
      const { existing, next } = plan;
      const events = next.version !== existing.version ? [this.scheduledEvent(next, 'moved')] : [];
      // Moved by an administrator meanwhile: the file's time wins, applied to the fresh record.
      if (!(await this.deps.store.replace(next, existing.version, events))) return this.applyRow(row);
    }
    return plan;
  }

  /** Applies a change (a move, or place, note, phone); the version grows only with the start. */
  private async change(
    caller: Actor,
    record: AppointmentRecord,
    input: { start?: string; phone?: string | undefined; place?: string | undefined; note?: string | undefined },
  ): Promise<AppointmentRecord> {
    if (input.start !== undefined && input.start !== record.start && Date.parse(input.start) <= this.clock()) {
      throw badRequest('The new start has passed', { start: 'The new start has passed' });
    }
    const next = this.withChanges(record, input);
    if (!next) return record;
    const events: PendingEvent[] = [
      auditEvent({
        actor: caller,
        action: 'appointment.move',
        ...(await this.auditAbout(record)),
        before: auditSnapshot(record),
        after: auditSnapshot(next),
      }),
    ];
    if (next.version !== record.version) events.push(this.scheduledEvent(next, 'moved'));
    if (!(await this.deps.store.replace(next, record.version, events)))
      throw conflict('The appointment was changed by someone else meanwhile: reload it and try again');
    this.deps.onEventsCommitted();
    return next;
  }

  private withChanges(
    record: AppointmentRecord,
    input: { start?: string; name?: string | undefined; phone?: string | undefined; place?: string | undefined; note?: string | undefined },
  ): AppointmentRecord | null {
    const next: AppointmentRecord = {
      ...record,
      name: input.name ?? record.name,
      start: input.start ?? record.start,
      phone_input: input.phone ?? record.phone_input,
      place: input.place !== undefined ? input.place || this.deps.settings.defaultPlace : record.place,
      note: input.note ?? record.note,
    };
    const moved = next.start !== record.start;
    if (
      !moved &&
      next.name === record.name &&
      next.phone_input === record.phone_input &&
      next.place === record.place &&
      next.note === record.note
    )
      return null;
    return {
      ...next,
      version: moved ? record.version + 1 : record.version,
      // A moved appointment starts afresh: its status and its messages' records were for the old
      // time (the new version's confirmation and reminders are recorded anew; announcements stay).
      ...(moved
        ? {
            status: 'waiting' as const,
            status_updated_at: null,
            deliveries: record.deliveries.filter((delivery) => delivery.kind === 'announcement'),
          }
        : {}),
      updated_at: new Date(this.clock()).toISOString(),
    };
  }

  private newRecord(input: {
    email: string;
    start: string;
    name?: string | undefined;
    phone?: string | undefined;
    place?: string | undefined;
    note?: string | undefined;
  }): AppointmentRecord {
    const now = new Date(this.clock()).toISOString();
    return {
      id: randomUUID(),
      email: input.email.toLowerCase(),
      name: input.name ?? '',
      start: input.start,
      time_zone: this.deps.settings.timeZone,
      place: input.place || this.deps.settings.defaultPlace,
      note: input.note ?? '',
      phone_input: input.phone ?? '',
      version: 1,
      status: 'waiting',
      status_updated_at: null,
      deliveries: [],
      created_at: now,
      updated_at: now,
    };
  }

  private startOf(input: string): string {
    const reading = readStart(input, this.deps.settings.timeZone);
    if (!('start' in reading)) throw badRequest(reading.message, { start: reading.message });
    if (Date.parse(reading.start) <= this.clock()) throw badRequest('The start has passed', { start: 'The start has passed' });
    return reading.start;
  }

  private async require(id: string): Promise<AppointmentRecord> {
    const record = await this.deps.store.findById(id);
    if (!record) throw notFound('No such appointment');
    return record;
  }

  /**
   * The account's appointment: the one under its address, and only once the account has confirmed
   * that address. Whoever registers first with someone else's address (unconfirmed) learns nothing
   * of that ticket holder's appointment, and performers are not given their name, photo or number.
   */
  private async recordOf(user: Pick<UserRecord, 'email' | 'email_verified'>): Promise<AppointmentRecord | null> {
    return user.email_verified ? this.deps.store.findByEmail(user.email) : null;
  }

  /** The appointment's participant: the account that has confirmed its address, or null (pending under the address). */
  private async holderOf(record: AppointmentRecord): Promise<UserRecord | null> {
    return confirmedHolder(await this.deps.users.findByEmail(record.email));
  }

  /** The accounts under these appointments' addresses, by lower-cased address: one query for a whole day. */
  private async accountsOf(records: AppointmentRecord[]): Promise<Map<string, UserRecord>> {
    const accounts = await this.deps.users.findByEmails(records.map((record) => record.email));
    return new Map(accounts.map((account) => [account.email.toLowerCase(), account]));
  }

  /**
   * The appointment's number: the box office's, else the holder's (never an unconfirmed account's).
   * The one the performers call (a landline too), that every screen, message and calendar names,
   * and that texts go to when it can take them.
   */
  private phoneOf(record: AppointmentRecord, user: UserRecord | null) {
    return appointmentPhone(record.phone_input, user?.phone_number ?? '', this.deps.settings.smsRegion);
  }

  private participantView(record: AppointmentRecord, call: AppointmentPhone): Appointment {
    return {
      id: record.id,
      start: inZone(record.start, record.time_zone),
      time_zone: record.time_zone,
      place: record.place,
      note: record.note,
      version: record.version,
      call_number: call.toCall,
      call_number_readable: call.readable,
      call_number_from: call.from,
    };
  }

  private async adminView(record: AppointmentRecord, known?: UserRecord): Promise<AdminAppointment> {
    return this.adminViewOf(record, known ?? (await this.deps.users.findByEmail(record.email)));
  }

  /** What administrators see of an appointment, given the account under its address (null: none). */
  private adminViewOf(record: AppointmentRecord, account: UserRecord | null): AdminAppointment {
    const user = confirmedHolder(account);
    const phone = this.phoneOf(record, user);
    // Added to the participant's view in place: an object spread followed by this many more
    // fields takes V8 about 20 µs a row, most of a call sheet of thousands (bench/import).
    return Object.assign<Appointment, Omit<AdminAppointment, keyof Appointment>>(this.participantView(record, phone), {
      address_status: user ? 'confirmed' : account ? 'not-confirmed' : 'no-account',
      email: record.email,
      user_id: user?.id ?? null,
      full_name: user?.full_name ?? null,
      pronouns: user ? user.pronouns : null,
      verification_photo_url: user ? verificationPhotoUrl(user) : null,
      name: record.name || null,
      phone: phone.e164,
      phone_problem: phone.problem,
      sms_reminders: user?.sms_reminders ?? true,
      status: record.status,
      status_updated_at: record.status_updated_at,
      deliveries: record.deliveries,
    });
  }

  /**
   * Whom an audit entry is about: the participant's account when the address has one (so that
   * their deletion erases it from the log), named by username; a ticket holder without an account
   * is not named (the log keeps no address).
   */
  private async auditAbout(
    record: AppointmentRecord,
  ): Promise<{ target: { type: 'appointment'; id: string; label: string | null }; subjectUserId: string | null }> {
    const user = await this.holderOf(record);
    return { target: { type: 'appointment', id: record.id, label: user?.username ?? null }, subjectUserId: user?.id ?? null };
  }

  private scheduledEvent(record: AppointmentRecord, reason: 'set' | 'moved'): PendingEvent {
    return {
      topic: TOPICS.appointments,
      event: createEvent({
        type: 'appointment.scheduled',
        key: record.id,
        data: { appointmentId: record.id, version: record.version, start: record.start, reason },
      }),
    };
  }

  private cancelledEvent(record: AppointmentRecord, erased: boolean): PendingEvent {
    return {
      topic: TOPICS.appointments,
      event: createEvent({
        type: 'appointment.cancelled',
        key: record.id,
        data: { appointmentId: record.id, version: record.version, erased },
      }),
    };
  }
}

/** What the audit log keeps of an appointment: when and where, never the address or the number. */
function auditSnapshot(record: AppointmentRecord): Record<string, unknown> {
  return { start: record.start, place: record.place, version: record.version };
}

/** What decides whether a text can go: the number texts go to (or why there is none), and the holder's choice. */
function textFields(
  phone: AppointmentPhone,
  user: UserRecord | null,
): Pick<AppointmentRecipient, 'phone' | 'phone_problem' | 'sms_reminders'> {
  return { phone: phone.e164, phone_problem: phone.problem, sms_reminders: user?.sms_reminders ?? true };
}

/** The account under an appointment's address as its holder: only once it has confirmed that address. */
function confirmedHolder(account: UserRecord | null): UserRecord | null {
  return account?.email_verified ? account : null;
}
