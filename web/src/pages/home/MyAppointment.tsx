import EventIcon from '@mui/icons-material/Event';
import Button from '@mui/material/Button';
import Paper from '@mui/material/Paper';
import Typography from '@mui/material/Typography';
import { useQuery } from '@tanstack/react-query';
import type { MyAppointment as MyAppointmentAnswer } from '@portal/contracts';
import { MY_CALENDAR_URL, appointmentTime, fetchMyAppointment, numberToCall } from '../../api/appointments';
import { ConfirmAddressNotice } from '../../components/ConfirmAddressNotice';

/**
 * GET /api/appointments/mine for the signed-in participant (shared by the card, the instructions
 * below it and the help page); not asked while `enabled` is false (nobody signed in).
 */
export function useMyAppointment(enabled = true): MyAppointmentAnswer | undefined {
  const { data } = useQuery({
    queryKey: ['my-appointment'],
    queryFn: ({ signal }) => fetchMyAppointment(signal),
    staleTime: 60_000,
    enabled,
  });
  return data;
}

/**
 * The participant's appointment above the instructions, with the number that will be called and a
 * link that adds it to their calendar (an .ics file with an alarm). Nothing is shown until the box
 * office gave them one; until their address is confirmed they are told why nothing can show, and
 * get a button for a new link.
 */
export function MyAppointment({ mine, email }: { mine: MyAppointmentAnswer | undefined; email: string }) {
  if (mine && !mine.email_confirmed) return <ConfirmAddressNotice email={email} />;
  const appointment = mine?.appointment;
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
      <Typography sx={{ mb: 1, overflowWrap: 'anywhere' }}>{appointment.place}</Typography>
      {appointment.call_number ? (
        <Typography sx={{ mb: 1 }}>
          {`We will call ${numberToCall(appointment)}${appointment.call_number_from === 'box-office' ? ' (the number the box office gave)' : ' (the number in your profile)'}.`}
        </Typography>
      ) : null}
      {appointment.note ? <Typography sx={{ mb: 2, overflowWrap: 'anywhere' }}>{appointment.note}</Typography> : null}
      <Button component="a" href={MY_CALENDAR_URL} download="appointment.ics" variant="outlined" startIcon={<EventIcon />} sx={{ mt: 1 }}>
        Add to calendar
      </Button>
    </Paper>
  );
}
