import { zodResolver } from '@hookform/resolvers/zod';
import UploadIcon from '@mui/icons-material/Upload';
import Alert from '@mui/material/Alert';
import Avatar from '@mui/material/Avatar';
import Button from '@mui/material/Button';
import Stack from '@mui/material/Stack';
import TextField from '@mui/material/TextField';
import Typography from '@mui/material/Typography';
import { useQueryClient } from '@tanstack/react-query';
import { useState } from 'react';
import { useForm } from 'react-hook-form';
import type { z } from 'zod';
import { MESSAGES, PRONOUN_OPTIONS, fullNameField, profileUpdateSchema, type User } from '@portal/contracts';
import { ApiRequestError } from '../../api/http';
import { updateProfile } from '../../api/account';
import { reloadCurrentUser } from '../../auth/useCurrentUser';
import { PhoneField, PronounsField, SubmitButton } from '../../components/FormParts';
import { FilePickButton } from '../../components/FilePickButton';
import { useObjectUrl } from '../../components/useObjectUrl';

/** In the browser the full name is required too (the API accepts a profile update without it). */
const profileFormSchema = profileUpdateSchema.extend({ full_name: fullNameField });
type ProfileFormInput = z.input<typeof profileFormSchema>;
type ProfileFormOutput = z.output<typeof profileFormSchema>;

/** The edit view of the profile: contact details, pronouns and a new avatar. */
export function ProfileEditForm({ user, onCancel, onSaved }: { user: User; onCancel: () => void; onSaved: () => void }) {
  const client = useQueryClient();
  const [avatar, setAvatar] = useState<File | null>(null);
  const [avatarProblem, setAvatarProblem] = useState<string | null>(null);
  const [failure, setFailure] = useState<string | null>(null);
  const preview = useObjectUrl(avatar);
  const {
    register,
    handleSubmit,
    formState: { errors, isSubmitting },
  } = useForm<ProfileFormInput, unknown, ProfileFormOutput>({
    resolver: zodResolver(profileFormSchema),
    defaultValues: { full_name: user.full_name, email: user.email, phone_number: user.phone_number, pronouns: PRONOUN_OPTIONS.find((option) => option === user.pronouns) ?? '' },
  });

  const save = handleSubmit(async (values) => {
    setFailure(null);
    try {
      await updateProfile({ ...values, avatar });
      await reloadCurrentUser(client);
      onSaved();
    } catch (error) {
      console.warn('profile update failed', error);
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
      <PhoneField {...field('phone_number')} />
      <PronounsField {...field('pronouns')} />
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
