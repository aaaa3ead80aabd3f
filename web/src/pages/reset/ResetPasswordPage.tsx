import { zodResolver } from '@hookform/resolvers/zod';
import Alert from '@mui/material/Alert';
import Button from '@mui/material/Button';
import Stack from '@mui/material/Stack';
import TextField from '@mui/material/TextField';
import Typography from '@mui/material/Typography';
import { useQueryClient } from '@tanstack/react-query';
import { useState } from 'react';
import { useForm, type FieldErrors } from 'react-hook-form';
import { Link as RouterLink, useNavigate } from 'react-router';
import type { z } from 'zod';
import { MESSAGES, PASSWORD_MIN_LENGTH, newPasswordFormSchema } from '@portal/contracts';
import { ApiRequestError, messageOf } from '../../api/http';
import { requestAnotherResetCode, updatePasswordWithCode } from '../../api/password-reset';
import { reloadCurrentUser } from '../../auth/useCurrentUser';
import { FormError, SubmitButton } from '../../components/FormParts';
import { Page } from '../../components/Page';
import { useNotify } from '../../notifications/notify-context';
import { clearResetProgress, readResetProgress, saveResetProgress } from './reset-progress';

type PasswordForm = z.input<typeof newPasswordFormSchema>;
type ParsedPassword = z.output<typeof newPasswordFormSchema>;

/** /reset-password-page, step 3: the new password, twice. Then every session ends and the person logs in again. */
export default function ResetPasswordPage() {
  const [progress] = useState(readResetProgress);
  if (!progress?.verifiedCode) {
    return (
      <Page title="Reset Password">
        <Alert severity="info" sx={{ mb: 2 }}>
          Please enter the code we emailed you first.
        </Alert>
        <Stack spacing={1.5}>
          <Button component={RouterLink} to="/reset-password-code" variant="contained" size="large">
            Enter the Code
          </Button>
          <Button component={RouterLink} to="/reset-password-email" variant="text">
            Send Me a Code
          </Button>
        </Stack>
      </Page>
    );
  }
  return <NewPasswordForm email={progress.email} code={progress.verifiedCode} />;
}

function NewPasswordForm({ email, code }: { email: string; code: string }) {
  const navigate = useNavigate();
  const client = useQueryClient();
  const notify = useNotify();
  const [error, setError] = useState<string | null>(null);
  const [codeSpent, setCodeSpent] = useState(false);
  const [resending, setResending] = useState(false);
  const {
    register,
    handleSubmit,
    formState: { errors, isSubmitting },
  } = useForm<PasswordForm, unknown, ParsedPassword>({
    resolver: zodResolver(newPasswordFormSchema),
    defaultValues: { password: '', confirm_password: '' },
  });

  const onInvalid = (invalid: FieldErrors<PasswordForm>) => {
    setError(invalid.password?.message ?? invalid.confirm_password?.message ?? MESSAGES.resetPasswordRequired);
  };

  const save = async ({ password }: ParsedPassword) => {
    setError(null);
    try {
      await updatePasswordWithCode(email, code, password);
    } catch (failure) {
      console.warn('the password was not updated', failure);
      setError(messageOf(failure, MESSAGES.internal));
      if (failure instanceof ApiRequestError && failure.status === 400 && failure.message === MESSAGES.incorrectCode) {
        // Expired, used up or replaced: only another code helps now.
        saveResetProgress({ email });
        setCodeSpent(true);
      }
      return;
    }
    clearResetProgress();
    notify({ message: MESSAGES.passwordUpdated, severity: 'success' });
    // Every session of the account has ended, perhaps this browser's own: ask who is signed in now.
    await reloadCurrentUser(client).catch(() => null);
    void navigate('/login');
  };

  const requestAnother = async () => {
    setResending(true);
    try {
      await requestAnotherResetCode(email);
      void navigate('/reset-password-code');
    } catch (failure) {
      console.warn('another reset code was not sent', failure);
      setError(messageOf(failure, MESSAGES.internal));
      setResending(false);
    }
  };

  return (
    <Page title="Reset Password">
      <Typography sx={{ mb: 1, overflowWrap: 'anywhere' }}>{`Choose a new password for ${email}.`}</Typography>
      <FormError sx={{ my: 1 }}>{error}</FormError>
      {codeSpent ? (
        <Button variant="outlined" onClick={() => void requestAnother()} disabled={resending} sx={{ mb: 1 }}>
          Request another code
        </Button>
      ) : null}
      <form onSubmit={(event) => void handleSubmit(save, onInvalid)(event)} noValidate>
        <TextField
          label="New Password"
          type="password"
          autoComplete="new-password"
          required
          {...register('password')}
          error={Boolean(errors.password)}
          helperText={`At least ${PASSWORD_MIN_LENGTH} characters`}
        />
        <TextField
          label="Confirm New Password"
          type="password"
          autoComplete="new-password"
          required
          {...register('confirm_password')}
          error={Boolean(errors.confirm_password)}
        />
        <SubmitButton submitting={isSubmitting} fullWidth sx={{ mt: 3 }}>
          Update Password
        </SubmitButton>
      </form>
    </Page>
  );
}
