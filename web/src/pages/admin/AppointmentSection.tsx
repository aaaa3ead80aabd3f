import Alert from '@mui/material/Alert';
import Box from '@mui/material/Box';
import Button from '@mui/material/Button';
import Stack from '@mui/material/Stack';
import TextField from '@mui/material/TextField';
import Typography from '@mui/material/Typography';
import { useQuery, useQueryClient } from '@tanstack/react-query';
import { useEffect, useId, useState } from 'react';
import type { AdminAppointment, User } from '@portal/contracts';
import {
  appointmentTime,
  cancelAppointment,
  isDialable,
  fetchUserAppointment,
  setAppointment,
  updateAppointment,
} from '../../api/appointments';
import { messageOf } from '../../api/http';
import { ADDRESS_STATUS_WORDS } from './appointment-words';

/** The number performers will call, and whether it takes texts, in words. */
function phoneInWords(appointment: Pick<AdminAppointment, 'phone' | 'call_number' | 'call_number_readable' | 'phone_problem'>): string {
  if (!appointment.call_number || !isDialable(appointment.call_number)) return `No number to call: ${appointment.phone_problem}.`;
  const number = `Number to call: ${appointment.call_number_readable ?? appointment.call_number}`;
  return appointment.phone ? `${number}.` : `${number} (texts off: ${appointment.phone_problem}).`;
}

/**
 * The user dialog's appointment: set one, move it (a new confirmation goes out and the reminders
 * move), change its place, or cancel it. No form element of its own: it sits inside the dialog's.
 */
export function AppointmentSection({ user }: { user: User }) {
  const client = useQueryClient();
  const headingId = useId();
  const key = ['user-appointment', user.id];
  const { data, isPending } = useQuery({ queryKey: key, queryFn: ({ signal }) => fetchUserAppointment(user.id, signal) });
  const appointment = data?.appointment ?? null;
  // The wall time in the event's zone, as the server reads a time without an offset.
  const [start, setStart] = useState('');
  const [place, setPlace] = useState('');
  const [busy, setBusy] = useState(false);
  const [outcome, setOutcome] = useState<{ severity: 'success' | 'error'; message: string } | null>(null);
  useEffect(() => {
    setStart(appointment ? appointment.start.slice(0, 16) : '');
    setPlace(appointment?.place ?? '');
  }, [appointment?.id, appointment?.version, appointment?.place]);

  const act = async (work: () => Promise<unknown>, done: string) => {
    setBusy(true);
    setOutcome(null);
    try {
      await work();
      await client.invalidateQueries({ queryKey: key });
      setOutcome({ severity: 'success', message: done });
    } catch (error) {
      setOutcome({ severity: 'error', message: messageOf(error, 'The appointment could not be saved. Please try again.') });
    } finally {
      setBusy(false);
    }
  };

  const save = () =>
    act(
      () =>
        appointment
          ? updateAppointment(appointment.id, { start, ...(place ? { place } : {}) })
          : setAppointment({ email: user.email, start, ...(place ? { place } : {}) }),
      appointment
        ? 'The appointment is saved; if its time changed, a new confirmation is on its way.'
        : 'The appointment is set; a confirmation is on its way.',
    );

  return (
    <Box component="section" aria-labelledby={headingId} sx={{ mt: 3 }}>
      <Typography id={headingId} variant="h3" component="h3" sx={{ fontSize: '1.1rem', fontWeight: 600, mb: 1 }}>
        Appointment
      </Typography>
      {outcome ? (
        <Alert severity={outcome.severity} sx={{ mb: 1 }}>
          {outcome.message}
        </Alert>
      ) : null}
      {isPending ? (
        <Typography role="status">Loading…</Typography>
      ) : (
        <>
          <Typography variant="body2" sx={{ mb: 1, overflowWrap: 'anywhere' }}>
            {appointment
              ? `${appointmentTime(appointment.start, appointment.time_zone)} at ${appointment.place}. ${phoneInWords(appointment)}`
              : 'No appointment yet.'}
          </Typography>
          {appointment ? (
            <Typography variant="body2" sx={{ mb: 1, overflowWrap: 'anywhere' }}>
              {ADDRESS_STATUS_WORDS[appointment.address_status]}
            </Typography>
          ) : null}
          <Stack direction={{ xs: 'column', sm: 'row' }} spacing={1.5}>
            <TextField
              label={`Time${appointment ? ` (${appointment.time_zone})` : ''}`}
              type="datetime-local"
              value={start}
              onChange={(event) => setStart(event.target.value)}
              slotProps={{ inputLabel: { shrink: true } }}
              size="small"
            />
            <TextField
              label="Place"
              value={place}
              onChange={(event) => setPlace(event.target.value)}
              size="small"
              helperText="Empty: the street corner"
            />
          </Stack>
          <Stack direction="row" spacing={1} sx={{ mt: 1 }}>
            <Button type="button" variant="outlined" disabled={busy || !start} onClick={() => void save()}>
              {appointment ? 'Save appointment' : 'Set appointment'}
            </Button>
            {appointment ? (
              <Button
                type="button"
                color="error"
                disabled={busy}
                onClick={() => void act(() => cancelAppointment(appointment.id), 'The appointment and its reminders are cancelled.')}
              >
                Cancel appointment
              </Button>
            ) : null}
          </Stack>
        </>
      )}
    </Box>
  );
}
