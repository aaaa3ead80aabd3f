import Alert from '@mui/material/Alert';
import Link from '@mui/material/Link';
import Stack from '@mui/material/Stack';
import Typography from '@mui/material/Typography';
import { Link as RouterLink } from 'react-router';
import { Page } from './Page';

/** A page that needs the server, opened without a network: says so, and what still works. */
export function OfflineNotice() {
  return (
    <Page title="You are offline">
      <Alert severity="info" sx={{ mb: 2 }}>
        This phone has no connection right now. This page comes back by itself when the network does.
      </Alert>
      <Typography sx={{ mb: 1 }}>Meanwhile you can open:</Typography>
      <Stack spacing={1}>
        <Link component={RouterLink} to="/archive" sx={{ py: 1 }}>
          Archive
        </Link>
        <Link component={RouterLink} to="/help" sx={{ py: 1 }}>
          Help
        </Link>
      </Stack>
    </Page>
  );
}
