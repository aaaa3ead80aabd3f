import Alert from '@mui/material/Alert';
import Button from '@mui/material/Button';
import Link from '@mui/material/Link';
import Stack from '@mui/material/Stack';
import Typography from '@mui/material/Typography';
import { Link as RouterLink } from 'react-router';
import type { PublicConfig } from '@portal/contracts';
import { Page } from '../../components/Page';

/** The landing page for visitors: the ticket warning, login and registration, the outside links. */
export function VisitorLanding({ config }: { config: PublicConfig }) {
  return (
    <Page title={config.productName}>
      <Alert severity="warning" variant="outlined" sx={{ my: 2, fontWeight: 600 }}>
        (Do NOT register for an account unless you have a ticket)
      </Alert>
      <Typography sx={{ mb: 3 }}>If you are participating in the investigation, please register or login.</Typography>
      <Stack direction={{ xs: 'column', sm: 'row' }} spacing={2} sx={{ mb: 4 }}>
        <Button component={RouterLink} to="/login" variant="contained" size="large" fullWidth>
          Login
        </Button>
        <Button component={RouterLink} to="/registration" variant="outlined" size="large" fullWidth>
          Register
        </Button>
      </Stack>
      <Stack spacing={1.5}>
        <Link href={config.spyOnUrl} target="_blank" rel="noopener noreferrer" sx={{ py: 1 }}>
          {`Spy on ${config.productName}`}
        </Link>
        <Link href={config.ticketUrl} target="_blank" rel="noopener noreferrer" sx={{ py: 1 }}>
          Get a ticket
        </Link>
      </Stack>
    </Page>
  );
}
