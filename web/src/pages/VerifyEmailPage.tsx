import Alert from '@mui/material/Alert';
import Button from '@mui/material/Button';
import Typography from '@mui/material/Typography';
import { Link as RouterLink, useSearchParams } from 'react-router';
import { MESSAGES } from '@portal/contracts';
import { Page } from '../components/Page';

/**
 * Where the e-mail confirmation link lands: /verify-email?status=verified, or ?status=invalid for
 * a link that is wrong, expired or for an address the account no longer has. Without a status
 * (the original page's links) it shows the success, as the original did; a bad link no longer does.
 */
export default function VerifyEmailPage() {
  const [params] = useSearchParams();
  const status = params.get('status');
  if (status !== null && status !== 'verified') {
    return (
      <Page title="Email Verification">
        <Alert severity="error" sx={{ mb: 3 }}>
          {MESSAGES.verificationLinkInvalid}
        </Alert>
        <Button component={RouterLink} to="/home" variant="contained" size="large" fullWidth>
          Home
        </Button>
      </Page>
    );
  }
  return (
    <Page title={MESSAGES.emailVerified}>
      <Typography sx={{ mb: 3 }}>Your email address is confirmed and your account is activated.</Typography>
      <Button component={RouterLink} to="/user" variant="contained" size="large" fullWidth>
        User Page
      </Button>
    </Page>
  );
}
