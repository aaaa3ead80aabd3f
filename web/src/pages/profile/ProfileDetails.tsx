import Box from '@mui/material/Box';
import Button from '@mui/material/Button';
import Stack from '@mui/material/Stack';
import Typography from '@mui/material/Typography';
import type { User } from '@portal/contracts';
import { useLogOut } from '../../auth/useLogOut';

/** The read view of the profile. */
export function ProfileDetails({ user, onEdit }: { user: User; onEdit: () => void }) {
  const { logOut, warning } = useLogOut();
  const rows: [string, string][] = [
    ['Full Name', user.full_name],
    ['Email', user.email],
    ['Email Confirmed', user.email_verified ? 'Yes' : 'Not yet: open the link in the e-mail we sent'],
    ['Phone Number', user.phone_number],
    ['Pronouns', user.pronouns || 'Prefer not to say'],
  ];
  return (
    <>
      <Box component="dl" sx={{ m: 0, mb: 3 }}>
        {rows.map(([label, value]) => (
          <Box key={label} sx={{ py: 1.25, borderBottom: 1, borderColor: 'divider' }}>
            <Typography component="dt" variant="body2" color="text.secondary">
              {label}
            </Typography>
            <Typography component="dd" sx={{ m: 0, overflowWrap: 'anywhere' }}>
              {value}
            </Typography>
          </Box>
        ))}
      </Box>
      <Stack direction={{ xs: 'column', sm: 'row' }} spacing={1.5}>
        <Button variant="contained" size="large" onClick={onEdit} fullWidth>
          Edit Profile
        </Button>
        <Button variant="outlined" size="large" fullWidth onClick={logOut}>
          Log Out
        </Button>
      </Stack>
      {warning}
    </>
  );
}
