import Paper from '@mui/material/Paper';
import Typography from '@mui/material/Typography';
import type { PublicConfig, User } from '@portal/contracts';
import { Page } from '../../components/Page';
import { numberToCall } from '../../api/appointments';
import { MyAppointment, useMyAppointment } from './MyAppointment';

/**
 * The home page of a signed-in informant: the welcome and the three instruction paragraphs. With
 * an appointment, the instructions name its place and the number that will be called (when there
 * is one) instead of the event's default street corner: one truth per participant.
 */
export function InformantInstructions({ user, config }: { user: User; config: PublicConfig }) {
  const mine = useMyAppointment();
  const appointment = mine?.appointment ?? null;
  const place = appointment?.place || config.streetCorner;
  const number = appointment ? numberToCall(appointment) : null;
  return (
    <Page title={`Welcome, ${user.username}`}>
      <Typography sx={{ mb: 3 }}>
        {`Everything you contribute to ${config.productName} is available to an investigator. Selected contributions may be made public online after ${config.publicAfterDate}.`}
      </Typography>
      <MyAppointment mine={mine} email={user.email} />
      <Paper
        component="section"
        aria-labelledby="instructions-heading"
        variant="outlined"
        sx={{ p: { xs: 2, sm: 3 }, overflowWrap: 'anywhere' }}
      >
        <Typography id="instructions-heading" variant="h2" component="h2" gutterBottom>
          Your instructions
        </Typography>
        <Typography sx={{ mb: 2 }}>
          Thank you for agreeing to be an informant. You will receive a confirmation email, and text reminders will be sent to you before
          your appointment.
        </Typography>
        <Typography sx={{ mb: 2 }}>
          {`On your appointment date, stand at ${place} and await a phone call on ${number ?? 'the number you gave at registration'}. In bad weather, wait in ${config.libraryEntryway}. Please arrive ${config.arriveEarly}.`}
        </Typography>
        <Typography>
          Before your appointment, review the training video under the HELP tab. Fully charge your phone and bring wired headphones. Use the
          menu icon at the top right to navigate and to upload evidence.
        </Typography>
      </Paper>
    </Page>
  );
}
