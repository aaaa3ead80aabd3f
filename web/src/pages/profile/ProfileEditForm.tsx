import { zodResolver } from '@hookform/resolvers/zod';
import UploadIcon from '@mui/icons-material/Upload';
import Alert from '@mui/material/Alert';
import Avatar from '@mui/material/Avatar';
import Checkbox from '@mui/material/Checkbox';
import FormControlLabel from '@mui/material/FormControlLabel';
import Button from '@mui/material/Button';
import Stack from '@mui/material/Stack';
import TextField from '@mui/material/TextField';
import Typography from '@mui/material/Typography';
import { useQueryClient } from '@tanstack/react-query';
import { useMemo, useState } from 'react';
import { useForm } from 'react-hook-form';
import type { z } from 'zod';
import { MESSAGES, PRONOUN_OPTIONS, fullNameField, profileUpdateSchema, type User } from '@portal/contracts';
import { ApiRequestError } from '../../api/http';
import { updateProfile } from '../../api/account';
import { reloadCurrentUser } from '../../auth/useCurrentUser';
import { PhoneField, PronounsField, SubmitButton } from '../../components/FormParts';
import { FilePickButton } from '../../components/FilePickButton';
import { useObjectUrl } from '../../components/useObjectUrl';

/**
 * In the browser the full name is required too (the API accepts a profile update without it), and
 * the current password as soon as the e-mail address is not the account's own any more.
 */
function profileFormSchema(currentEmail: string) {
  return profileUpdateSchema.extend({ full_name: fullNameField }).superRefine((values, context) => {
    if (emailChanged(values.email, currentEmail) && !values.current_password) {
      context.addIssue({ code: 'custom', path: ['current_password'], message: MESSAGES.currentPasswordRequired });
    }
  });
}
type ProfileFormInput = z.input<ReturnType<typeof profileFormSchema>>;
type ProfileFormOutput = z.output<ReturnType<typeof profileFormSchema>>;

const emailChanged = (typed: string | undefined, currentEmail: string) => (typed ?? '').trim().toLowerCase() !== currentEmail.toLowerCase();

/** The edit view of the profile: contact details, pronouns and a new avatar. */
export function ProfileEditForm({ user, onCancel, onSaved }: { user: User; onCancel: () => void; onSaved: () => void }) {
  const client = useQueryClient();
  const [avatar, setAvatar] = useState<File | null>(null);
  const [avatarProblem, setAvatarProblem] = useState<string | null>(null);
  const [failure, setFailure] = useState<string | null>(null);
  const preview = useObjectUrl(avatar);
  const schema = useMemo(() => profileFormSchema(user.email), [user.email]);
  const {
    register,
    handleSubmit,
    watch,
    setError,
    formState: { errors, isSubmitting },
  } = useForm<ProfileFormInput, unknown, ProfileFormOutput>({
    resolver: zodResolver(schema),
    defaultValues: {
      full_name: user.full_name,
      email: user.email,
      phone_number: user.phone_number,
      pronouns: PRONOUN_OPTIONS.find((option) => option === user.pronouns) ?? '',
      current_password: '',
      sms_reminders: user.sms_reminders,
    },
  });
  const changingEmail = emailChanged(watch('email'), user.email);

  const save = handleSubmit(async (values) => {
    setFailure(null);
    const { current_password: currentPassword, ...details } = values;
    try {
      // The password travels only when the address changes.
      await updateProfile({ ...details, ...(changingEmail ? { current_password: currentPassword } : {}), avatar });
      await reloadCurrentUser(client);
      onSaved();
    } catch (error) {
      console.warn('profile update failed', error);
      const passwordProblem = error instanceof ApiRequestError ? error.fields.current_password : undefined;
      if (passwordProblem) {
        setError('current_password', { message: passwordProblem }, { shouldFocus: true });
        return;
      }
      setFailure(error instanceof ApiRequestError && error.status !== 0 ? error.message : '');
    }
  });

  const field = (name: keyof ProfileFormInput) => ({
    ...register(name),
    error: Boolean(errors[name]),
    helperText: errors[name]?.message,
  });

  return (
    <form onSubmit={save} noValidate aria-label="Edit profile">
      {failure !== null ? (
        <Alert severity="error" sx={{ mb: 1 }}>
          {[MESSAGES.userUpdateFailed, failure].filter(Boolean).join(' ')}
        </Alert>
      ) : null}
      <TextField label="Full Name" autoComplete="name" required {...field('full_name')} />
      <TextField label="Email" type="email" autoComplete="email" autoCapitalize="none" required {...field('email')} />
      {changingEmail ? (
        <TextField
          label="Current Password"
          type="password"
          autoComplete="current-password"
          required
          {...field('current_password')}
          helperText={errors.current_password?.message ?? 'To change your e-mail address, enter your current password.'}
        />
      ) : null}
      <PhoneField {...field('phone_number')} />
      <PronounsField {...field('pronouns')} />
      <FormControlLabel
        sx={{ mt: 1 }}
        control={<Checkbox {...register('sms_reminders')} defaultChecked={user.sms_reminders} />}
        label="Send me text reminders before my appointment"
      />
      <Stack direction="row" spacing={2} alignItems="center" sx={{ mt: 2 }}>
        {preview ? <Avatar src={preview} alt="Your new avatar" sx={{ width: 56, height: 56 }} /> : null}
        <FilePickButton
          accept="image/*"
          variant="outlined"
          startIcon={<UploadIcon />}
          onPick={(file) => {
            if (file.type.startsWith('image/')) {
              setAvatar(file);
              setAvatarProblem(null);
            } else {
              setAvatarProblem(MESSAGES.avatarNotImage);
            }
          }}
        >
          Upload Avatar
        </FilePickButton>
      </Stack>
      {avatar ? (
        <Typography variant="body2" color="text.secondary" sx={{ mt: 1, overflowWrap: 'anywhere' }}>
          {avatar.name}
        </Typography>
      ) : null}
      {avatarProblem ? (
        <Alert severity="warning" sx={{ mt: 1 }}>
          {avatarProblem}
        </Alert>
      ) : null}
      <Stack direction={{ xs: 'column', sm: 'row' }} spacing={1.5} sx={{ mt: 3 }}>
        <SubmitButton submitting={isSubmitting} fullWidth>
          Save Changes
        </SubmitButton>
        <Button variant="outlined" size="large" fullWidth onClick={onCancel} disabled={isSubmitting}>
          Cancel
        </Button>
      </Stack>
    </form>
  );
}
