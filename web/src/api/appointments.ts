import type {
  AdminAppointment,
  AppointmentCreate,
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

/** GET /api/appointments?date=: the day's call sheet (administrators). */
export function fetchCallSheet(date: string, signal?: AbortSignal): Promise<CallSheet> {
  return apiRequest<CallSheet>(`/api/appointments?date=${encodeURIComponent(date)}`, signal ? { signal } : {});
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

/** Today's date (YYYY-MM-DD) in a zone. */
export function todayIn(timeZone?: string): string {
  const parts = new Intl.DateTimeFormat('en-CA', { timeZone, year: 'numeric', month: '2-digit', day: '2-digit' }).format(new Date());
  return parts;
}
