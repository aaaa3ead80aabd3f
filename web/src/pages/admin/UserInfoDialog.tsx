import { zodResolver } from '@hookform/resolvers/zod';
import Alert from '@mui/material/Alert';
import Avatar from '@mui/material/Avatar';
import Box from '@mui/material/Box';
import Button from '@mui/material/Button';
import CircularProgress from '@mui/material/CircularProgress';
import Dialog from '@mui/material/Dialog';
import DialogActions from '@mui/material/DialogActions';
import DialogContent from '@mui/material/DialogContent';
import DialogTitle from '@mui/material/DialogTitle';
import Stack from '@mui/material/Stack';
import TextField from '@mui/material/TextField';
import Typography from '@mui/material/Typography';
import useMediaQuery from '@mui/material/useMediaQuery';
import { useTheme } from '@mui/material/styles';
import { useQueryClient } from '@tanstack/react-query';
import { useId, useState } from 'react';
import { useForm } from 'react-hook-form';
import { MESSAGES, ROLE_USER, adminUserUpdateSchema, type AdminUserUpdate, type User } from '@portal/contracts';
import { updateUserAsAdmin } from '../../api/admin';
import { ApiRequestError } from '../../api/http';
import { DEFAULT_AVATAR_URL } from '../../components/pictures';
import { ADMIN_USERS_KEY } from './users-query';
import { AppointmentSection } from './AppointmentSection';

/** 'User' for role 1, otherwise 'Admin' (SPEC section 2). */
export function roleName(role: number): string {
  return role === ROLE_USER ? 'User' : 'Admin';
}

/** "version 3, accepted 1 July 2026, 10:00", or "not recorded" for accounts made without. */
export function termsAccepted(user: Pick<User, 'terms_version' | 'terms_accepted_at'>): string {
  if (user.terms_version === null || user.terms_version === undefined) return MESSAGES.termsNotRecorded;
  const at = user.terms_accepted_at ? new Date(user.terms_accepted_at).toLocaleString() : null;
  return `version ${user.terms_version}${at ? `, accepted ${at}` : ''}`;
}

/** Whether the account proved its address: until it has, an appointment under the address is not its own. */
export function emailConfirmation(user: Pick<User, 'email_verified'>): string {
  return user.email_verified ? 'Yes' : 'No: an appointment under this address waits until the link in the e-mail is opened';
}

function Field({ label, value }: { label: string; value: string }) {
  return (
    <Box component="div" sx={{ display: 'grid', gridTemplateColumns: { xs: '1fr', sm: '160px 1fr' }, gap: { xs: 0, sm: 2 }, py: 0.75 }}>
      <Typography component="dt" variant="body2" color="text.secondary">
        {label}
      </Typography>
      <Typography component="dd" sx={{ m: 0, overflowWrap: 'anywhere' }}>
        {value || '—'}
      </Typography>
    </Box>
  );
}

/** A user's information (avatar, verification photo, contact details, role, video watched); 'Edit User' edits it. */
export function UserInfoDialog({ user, onClose, onSaved }: { user: User; onClose: () => void; onSaved: (user: User) => void }) {
  const client = useQueryClient();
  const theme = useTheme();
  const fullScreen = useMediaQuery(theme.breakpoints.down('sm'));
  const titleId = useId();
  const [editing, setEditing] = useState(false);
  // Shown inside the dialog: a toast under an open dialog is hidden from screen readers.
  const [outcome, setOutcome] = useState<{ severity: 'success' | 'error'; message: string } | null>(null);
  const {
    register,
    handleSubmit,
    reset,
    setError,
    formState: { errors, isSubmitting },
  } = useForm<AdminUserUpdate>({
    resolver: zodResolver(adminUserUpdateSchema),
    defaultValues: { username: user.username, email: user.email, phone_number: user.phone_number, full_name: user.full_name },
  });

  const save = handleSubmit(async (values) => {
    setOutcome(null);
    try {
      const updated = await updateUserAsAdmin(user.id, values);
      await client.invalidateQueries({ queryKey: ADMIN_USERS_KEY });
      setOutcome({ severity: 'success', message: MESSAGES.userUpdated });
      reset({ username: updated.username, email: updated.email, phone_number: updated.phone_number, full_name: updated.full_name });
      setEditing(false);
      onSaved(updated);
    } catch (error) {
      console.warn('user update failed', error);
      if (error instanceof ApiRequestError) {
        for (const [name, message] of Object.entries(error.fields)) {
          if (name === 'username' || name === 'email' || name === 'phone_number' || name === 'full_name') setError(name, { message });
        }
      }
      setOutcome({ severity: 'error', message: MESSAGES.userUpdateFailed });
    }
  });

  const field = (name: keyof AdminUserUpdate) => ({ ...register(name), error: Boolean(errors[name]), helperText: errors[name]?.message });

  return (
    <Dialog open onClose={isSubmitting ? undefined : onClose} fullScreen={fullScreen} fullWidth maxWidth="sm" aria-labelledby={titleId}>
      <form onSubmit={(event) => void save(event)} noValidate>
        <DialogTitle id={titleId} sx={{ overflowWrap: 'anywhere' }}>
          User Information
        </DialogTitle>
        <DialogContent>
          {outcome ? (
            <Alert severity={outcome.severity} sx={{ mb: 2 }}>
              {outcome.message}
            </Alert>
          ) : null}
          <Stack direction="row" spacing={2} alignItems="flex-start" sx={{ mb: 2 }}>
            <Stack alignItems="center" spacing={0.5}>
              <Avatar
                src={user.avatar_AWS_URL ?? DEFAULT_AVATAR_URL}
                alt={`Avatar of ${user.username}`}
                sx={{ width: 72, height: 72, bgcolor: 'grey.300' }}
              />
              <Typography variant="caption">Avatar</Typography>
            </Stack>
            <Stack alignItems="center" spacing={0.5}>
              {user.verification_photo_AWS_URL ? (
                <Box
                  component="img"
                  src={user.verification_photo_AWS_URL}
                  alt={`Verification photo of ${user.username}`}
                  sx={{ width: 120, height: 120, objectFit: 'cover', borderRadius: 1, bgcolor: 'grey.200' }}
                />
              ) : (
                <Box
                  sx={{
                    width: 120,
                    height: 120,
                    borderRadius: 1,
                    bgcolor: 'grey.200',
                    display: 'flex',
                    alignItems: 'center',
                    justifyContent: 'center',
                    p: 1,
                    textAlign: 'center',
                  }}
                >
                  <Typography variant="caption">No verification photo</Typography>
                </Box>
              )}
              <Typography variant="caption">Verification photo</Typography>
            </Stack>
          </Stack>
          {editing ? (
            <>
              <TextField label="Username" autoCapitalize="none" required {...field('username')} />
              <TextField label="Email" type="email" autoCapitalize="none" required {...field('email')} />
              <TextField
                label="Phone Number"
                type="tel"
                required
                {...field('phone_number')}
                slotProps={{ htmlInput: { inputMode: 'tel', minLength: 10, maxLength: 40 } }}
              />
              <TextField label="Full Name" required {...field('full_name')} />
              <TextField
                label="Role"
                value={roleName(user.role)}
                slotProps={{ input: { readOnly: true } }}
                helperText="The role cannot be changed here."
              />
              <TextField label="Video Watched" value={user.video_watched ? 'Yes' : 'No'} slotProps={{ input: { readOnly: true } }} />
            </>
          ) : (
            <Box component="dl" sx={{ m: 0 }}>
              <Field label="Username" value={user.username} />
              <Field label="Email" value={user.email} />
              <Field label="Email Confirmed" value={emailConfirmation(user)} />
              <Field label="Phone Number" value={user.phone_number} />
              <Field label="Role" value={roleName(user.role)} />
              <Field label="Full Name" value={user.full_name} />
              <Field label="Video Watched" value={user.video_watched ? 'Yes' : 'No'} />
              <Field label="Participation Terms" value={termsAccepted(user)} />
              <Field label="Text Reminders" value={user.sms_reminders ? 'On' : 'Off'} />
            </Box>
          )}
          {editing ? null : <AppointmentSection user={user} />}
        </DialogContent>
        <DialogActions sx={{ px: 3, pb: 2, flexWrap: 'wrap', gap: 1 }}>
          {editing ? (
            <>
              <Button
                key="cancel"
                onClick={() => {
                  reset();
                  setEditing(false);
                }}
                disabled={isSubmitting}
              >
                Cancel
              </Button>
              <Button
                key="save"
                type="submit"
                variant="contained"
                disabled={isSubmitting}
                startIcon={isSubmitting ? <CircularProgress size={18} color="inherit" aria-hidden="true" /> : undefined}
              >
                Save Changes
              </Button>
            </>
          ) : (
            <>
              <Button key="close" onClick={onClose}>
                Close
              </Button>
              {/* A plain download link: the browser streams the archive to disk and shows its progress. */}
              <Button key="export" component="a" href={`/api/user/${encodeURIComponent(user.id)}/export`} download>
                Export data
              </Button>
              {/* Keys keep this button from becoming the submit button while its click is handled. */}
              <Button
                key="edit"
                variant="contained"
                onClick={() => {
                  setOutcome(null);
                  setEditing(true);
                }}
              >
                Edit User
              </Button>
            </>
          )}
        </DialogActions>
      </form>
    </Dialog>
  );
}
