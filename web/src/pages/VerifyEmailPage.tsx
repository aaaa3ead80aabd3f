import Alert from '@mui/material/Alert';
import Button from '@mui/material/Button';
import Typography from '@mui/material/Typography';
import { Link as RouterLink, useSearchParams } from 'react-router';
import { MESSAGES } from '@portal/contracts';
import { useCurrentUser } from '../auth/useCurrentUser';
import { ResendLinkButton } from '../components/ConfirmAddressNotice';
import { Page } from '../components/Page';

/**
 * Where the e-mail confirmation link lands: /verify-email?status=verified, or ?status=invalid for
 * a link that is wrong, expired or for an address the account no longer has. Without a status
 * (the original page's links) it shows the success, as the original did; a bad link no longer does.
 */
export default function VerifyEmailPage() {
  const [params] = useSearchParams();
  const { user } = useCurrentUser();
  const status = params.get('status');
  if (status !== null && status !== 'verified') {
    // A dead link (7 days old, or signed with a secret since retired): a new one, right here.
    return (
      <Page title="Email Verification">
        <Alert severity="error" sx={{ mb: 3 }}>
          {MESSAGES.verificationLinkInvalid}
        </Alert>
        {user && !user.email_verified ? (
          <>
            <Typography sx={{ mb: 2, overflowWrap: 'anywhere' }}>{`We can send a new link to ${user.email}.`}</Typography>
            <ResendLinkButton fullWidth />
          </>
        ) : user ? (
          <Typography sx={{ mb: 2 }}>{MESSAGES.alreadyConfirmed}</Typography>
        ) : (
          <>
            <Typography sx={{ mb: 2 }}>Log in on this device to get a new link: it is sent to the address of your account.</Typography>
            <Button component={RouterLink} to="/login" variant="contained" size="large" fullWidth sx={{ mb: 1.5 }}>
              Log in to get a new link
            </Button>
          </>
        )}
        <Button component={RouterLink} to="/home" variant="outlined" size="large" fullWidth sx={{ mt: 1.5 }}>
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
