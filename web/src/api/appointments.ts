import type {
  AdminAppointment,
  Appointment,
  AnnouncePreview,
  AnnouncePreviewRequest,
  AnnounceRequest,
  AnnounceResult,
  AppointmentCreate,
  AppointmentImportResult,
  AppointmentStatus,
  AppointmentUpdate,
  CallSheet,
  MyAppointment,
} from '@portal/contracts';
import { apiRequest } from './http';

/** The participant's calendar file (an <a href>: the browser downloads it with the session cookie). */
export const MY_CALENDAR_URL = '/api/appointments/mine.ics';

/** GET /api/appointments/mine: the signed-in participant's appointment, or null. */
export function fetchMyAppointment(signal?: AbortSignal): Promise<MyAppointment> {
  return apiRequest<MyAppointment>('/api/appointments/mine', signal ? { signal } : {});
}

/** The number the performers will call (the box office's, else the profile's), spaced for reading; null when there is none. */
export function numberToCall(appointment: Pick<Appointment, 'call_number' | 'call_number_readable'>): string | null {
  return appointment.call_number_readable || appointment.call_number || null;
}

/** Whether a number can be dialled as it is (E.164, as the server writes every valid number): a tap-to-call link. */
export function isDialable(number: string): boolean {
  return /^\+[1-9]\d{1,14}$/.test(number);
}

/** GET /api/appointments?date=: the day's call sheet (administrators); without a day, today's in the event's time zone. */
export function fetchCallSheet(date: string | null, signal?: AbortSignal): Promise<CallSheet> {
  return apiRequest<CallSheet>(`/api/appointments${date ? `?date=${encodeURIComponent(date)}` : ''}`, signal ? { signal } : {});
}

/** POST /api/appointments/import: the box office's CSV imported, or with `dryRun` what importing it would do. */
export function importAppointments(file: File, dryRun: boolean): Promise<AppointmentImportResult> {
  const form = new FormData();
  form.append('file', file, file.name);
  return apiRequest<AppointmentImportResult>(`/api/appointments/import${dryRun ? '?dry_run=true' : ''}`, { method: 'POST', form });
}

/** POST /api/appointments/announce?dry_run=true: whom an announcement would reach, and its words. */
export function previewAnnouncement(request: AnnouncePreviewRequest, signal?: AbortSignal): Promise<AnnouncePreview> {
  return apiRequest<AnnouncePreview>('/api/appointments/announce?dry_run=true', {
    method: 'POST',
    json: request,
    ...(signal ? { signal } : {}),
  });
}

/** POST /api/appointments/announce: one message by e-mail, and text where one can go, to the day's (or time range's) participants. */
export function sendAnnouncement(request: AnnounceRequest): Promise<AnnounceResult> {
  return apiRequest<AnnounceResult>('/api/appointments/announce', { method: 'POST', json: request });
}

/** GET /api/appointments/user/{id}: an account's appointment (administrators). */
export function fetchUserAppointment(userId: string, signal?: AbortSignal): Promise<{ appointment: AdminAppointment | null }> {
  return apiRequest<{ appointment: AdminAppointment | null }>(
    `/api/appointments/user/${encodeURIComponent(userId)}`,
    signal ? { signal } : {},
  );
}

/** POST /api/appointments: sets one (an address that has one has it moved). */
export function setAppointment(input: AppointmentCreate): Promise<AdminAppointment> {
  return apiRequest<AdminAppointment>('/api/appointments', { method: 'POST', json: input });
}

/** PATCH /api/appointments/{id}: move it, change place or note, or the performers' status. */
export function updateAppointment(id: string, changes: AppointmentUpdate): Promise<AdminAppointment> {
  return apiRequest<AdminAppointment>(`/api/appointments/${encodeURIComponent(id)}`, { method: 'PATCH', json: changes });
}

export function setAppointmentStatus(id: string, status: AppointmentStatus): Promise<AdminAppointment> {
  return updateAppointment(id, { status });
}

/** DELETE /api/appointments/{id}: cancels it and its reminders. */
export function cancelAppointment(id: string): Promise<{ ok: true; message?: string }> {
  return apiRequest<{ ok: true; message?: string }>(`/api/appointments/${encodeURIComponent(id)}`, { method: 'DELETE' });
}

/** "Wed 1 Jul, 18:30" in the appointment's own zone (Intl knows IANA zones), whatever the phone's zone. */
export function appointmentTime(iso: string, timeZone: string, style: 'long' | 'time' = 'long'): string {
  const options: Intl.DateTimeFormatOptions =
    style === 'time'
      ? { timeZone, hour: '2-digit', minute: '2-digit', hour12: false }
      : {
          timeZone,
          weekday: 'long',
          day: 'numeric',
          month: 'long',
          year: 'numeric',
          hour: '2-digit',
          minute: '2-digit',
          hour12: false,
          timeZoneName: 'short',
        };
  return new Intl.DateTimeFormat('en-GB', options).format(new Date(iso));
}

/** A day (YYYY-MM-DD) in words: "Wednesday 1 July 2026". */
export function dayInWords(date: string): string {
  return new Intl.DateTimeFormat('en-GB', { timeZone: 'UTC', weekday: 'long', day: 'numeric', month: 'long', year: 'numeric' }).format(
    new Date(`${date}T12:00:00Z`),
  );
}
