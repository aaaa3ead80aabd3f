import Alert from '@mui/material/Alert';
import Box from '@mui/material/Box';
import Button from '@mui/material/Button';
import CircularProgress from '@mui/material/CircularProgress';
import Typography from '@mui/material/Typography';
import { useId, useState } from 'react';
import { MESSAGES } from '@portal/contracts';
import { resendConfirmationLink } from '../api/account';
import { messageOf } from '../api/http';

/**
 * "Send me a new link": a fresh confirmation link for the signed-in account's address (the earlier
 * one dies after 7 days, or when the portal's secret is rotated). The answer is said in words in a
 * live region, so that a screen reader hears it too.
 */
export function ResendLinkButton({ fullWidth = false }: { fullWidth?: boolean }) {
  const [busy, setBusy] = useState(false);
  const [outcome, setOutcome] = useState<{ severity: 'success' | 'error' | 'info'; message: string } | null>(null);
  const send = async () => {
    setBusy(true);
    setOutcome(null);
    try {
      const answer = await resendConfirmationLink();
      setOutcome({ severity: answer.sent ? 'success' : 'info', message: answer.message });
    } catch (error) {
      setOutcome({ severity: 'error', message: messageOf(error, 'The link could not be sent. Please try again in a moment.') });
    } finally {
      setBusy(false);
    }
  };
  return (
    <>
      <Button
        type="button"
        variant="contained"
        fullWidth={fullWidth}
        disabled={busy}
        onClick={() => void send()}
        startIcon={busy ? <CircularProgress size={18} color="inherit" aria-hidden="true" /> : undefined}
      >
        Send me a new link
      </Button>
      <div role="status" aria-live="polite">
        {outcome ? (
          <Alert severity={outcome.severity} sx={{ mt: 1.5 }}>
            {outcome.message}
          </Alert>
        ) : null}
      </div>
    </>
  );
}

/**
 * Shown to someone signed in whose address is not confirmed yet (the home page and the profile):
 * why no appointment shows, what to do, and the button for a new link. The home page names the
 * address (a typo shows there); the profile shows it in its details already.
 */
export function ConfirmAddressNotice({ email }: { email?: string }) {
  const headingId = useId();
  return (
    <Box component="section" aria-labelledby={headingId} sx={{ mb: 3 }}>
      <Alert severity="warning" role="note" sx={{ '& .MuiAlert-message': { width: '100%' } }}>
        <Typography id={headingId} component="h2" sx={{ fontWeight: 600, mb: 0.5, fontSize: '1rem' }}>
          Confirm your e-mail address
        </Typography>
        <Typography sx={{ mb: 1 }}>{MESSAGES.emailNotConfirmed}</Typography>
        <Typography sx={{ mb: 1.5, overflowWrap: 'anywhere' }}>
          {`We sent the link to ${email ?? 'your e-mail address'} when you registered. Look in your mailbox (and its spam folder). The link works for 7 days; if it no longer works, ask for a new one.`}
        </Typography>
        <ResendLinkButton />
      </Alert>
    </Box>
  );
}
