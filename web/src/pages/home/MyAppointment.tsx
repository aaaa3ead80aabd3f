import EventIcon from '@mui/icons-material/Event';
import Button from '@mui/material/Button';
import Paper from '@mui/material/Paper';
import Typography from '@mui/material/Typography';
import { useQuery } from '@tanstack/react-query';
import type { Appointment } from '@portal/contracts';
import { MY_CALENDAR_URL, appointmentTime, fetchMyAppointment } from '../../api/appointments';

/** The signed-in participant's appointment (shared by the card and the instructions below it). */
export function useMyAppointment(): Appointment | null {
  const { data } = useQuery({ queryKey: ['my-appointment'], queryFn: ({ signal }) => fetchMyAppointment(signal), staleTime: 60_000 });
  return data?.appointment ?? null;
}

/**
 * The participant's appointment above the instructions, with a link that adds it to their
 * calendar (an .ics file with an alarm). Nothing is shown until the box office gave them one.
 */
export function MyAppointment({ appointment }: { appointment: Appointment | null }) {
  if (!appointment) return null;
  const passed = Date.parse(appointment.start) < Date.now();
  return (
    <Paper
      component="section"
      aria-labelledby="appointment-heading"
      variant="outlined"
      sx={{ p: { xs: 2, sm: 3 }, mb: 3, overflowWrap: 'anywhere' }}
    >
      <Typography id="appointment-heading" variant="h2" component="h2" gutterBottom>
        Your appointment
      </Typography>
      <Typography sx={{ mb: 1, fontWeight: 600 }}>
        <time dateTime={appointment.start}>{appointmentTime(appointment.start, appointment.time_zone)}</time>
        {passed ? ' (its time has passed)' : ''}
      </Typography>
      <Typography sx={{ mb: appointment.note ? 1 : 2 }}>{appointment.place}</Typography>
      {appointment.note ? <Typography sx={{ mb: 2 }}>{appointment.note}</Typography> : null}
      <Button component="a" href={MY_CALENDAR_URL} download="appointment.ics" variant="outlined" startIcon={<EventIcon />}>
        Add to calendar
      </Button>
    </Paper>
  );
}
