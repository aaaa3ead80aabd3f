import ExpandMoreIcon from '@mui/icons-material/ExpandMore';
import Accordion from '@mui/material/Accordion';
import AccordionDetails from '@mui/material/AccordionDetails';
import AccordionSummary from '@mui/material/AccordionSummary';
import Box from '@mui/material/Box';
import Typography from '@mui/material/Typography';
import { CaptionedVideo } from '../../components/CaptionedVideo';
import { Page } from '../../components/Page';
import { PageLoading } from '../../components/PageLoading';
import { usePublicConfig } from '../../config/usePublicConfig';
import { useCurrentUser } from '../../auth/useCurrentUser';
import { appointmentTime, numberToCall } from '../../api/appointments';
import { useMyAppointment } from '../home/MyAppointment';
import { faqFor } from './faq';

/**
 * /help: the tutorial video (to watch again at any time) and the frequently asked questions; a
 * signed-in participant with an appointment reads its time, place and number there, as on the home page.
 */
export default function HelpPage() {
  const { data: config } = usePublicConfig();
  const { user } = useCurrentUser();
  const appointment = useMyAppointment(user !== null)?.appointment ?? null;
  if (!config) return <PageLoading />;
  const own = appointment
    ? { when: appointmentTime(appointment.start, appointment.time_zone), place: appointment.place, number: numberToCall(appointment) }
    : null;
  return (
    <Page title="Help" maxWidth="md">
      <Typography variant="h2" component="h2" gutterBottom>
        Training video
      </Typography>
      <CaptionedVideo src={config.tutorialVideo.url} captionsUrl={config.tutorialVideo.captionsUrl} label="Training video" controls />
      <Box sx={{ mb: 4 }} />
      <Typography variant="h2" component="h2" gutterBottom>
        Frequently asked questions
      </Typography>
      {faqFor(config, own).map((entry, index) => (
        <Accordion key={entry.question} disableGutters>
          <AccordionSummary expandIcon={<ExpandMoreIcon />} id={`faq-${index}-question`} aria-controls={`faq-${index}-answer`}>
            <Typography component="h3" sx={{ fontWeight: 600 }}>
              {entry.question}
            </Typography>
          </AccordionSummary>
          <AccordionDetails id={`faq-${index}-answer`} aria-labelledby={`faq-${index}-question`}>
            <Typography>{entry.answer}</Typography>
          </AccordionDetails>
        </Accordion>
      ))}
    </Page>
  );
}
