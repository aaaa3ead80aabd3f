import { zodResolver } from '@hookform/resolvers/zod';
import Button from '@mui/material/Button';
import Stack from '@mui/material/Stack';
import Typography from '@mui/material/Typography';
import { useState } from 'react';
import { useForm } from 'react-hook-form';
import { Link as RouterLink, useNavigate } from 'react-router';
import type { z } from 'zod';
import { MESSAGES, checkEmailRequestSchema } from '@portal/contracts';
import { messageOf } from '../../api/http';
import { checkResetEmail, sendResetCode } from '../../api/password-reset';
import { EmailField, FormError, SubmitButton } from '../../components/FormParts';
import { Page } from '../../components/Page';
import { readResetProgress, saveResetProgress } from './reset-progress';

type EmailForm = z.input<typeof checkEmailRequestSchema>;
type ParsedEmail = z.output<typeof checkEmailRequestSchema>;

/** /reset-password-email, step 1 of the reset: the account's address; the server e-mails a code. */
export default function ResetPasswordEmailPage() {
  const navigate = useNavigate();
  const [error, setError] = useState<string | null>(null);
  const {
    register,
    handleSubmit,
    formState: { errors, isSubmitting },
  } = useForm<EmailForm, unknown, ParsedEmail>({
    resolver: zodResolver(checkEmailRequestSchema),
    defaultValues: { email: readResetProgress()?.email ?? '' },
  });

  const send = handleSubmit(async ({ email }) => {
    setError(null);
    try {
      const { exists } = await checkResetEmail(email);
      if (!exists) {
        setError(MESSAGES.noAccountForEmail);
        return;
      }
      await sendResetCode(email);
      saveResetProgress({ email });
      void navigate('/reset-password-code');
    } catch (failure) {
      console.warn('the reset code was not sent', failure);
      setError(messageOf(failure, MESSAGES.internal));
    }
  });

  return (
    <Page title="Reset Password">
      <Typography sx={{ mb: 1 }}>
        Enter the email address of your account. We will email you a six-digit code to reset your password.
      </Typography>
      <FormError sx={{ my: 1 }}>{error}</FormError>
      <form onSubmit={(event) => void send(event)} noValidate>
        <EmailField {...register('email')} error={Boolean(errors.email)} helperText={errors.email?.message} />
        <Stack spacing={1.5} sx={{ mt: 2 }}>
          <SubmitButton submitting={isSubmitting}>Send Code</SubmitButton>
          <Button component={RouterLink} to="/reset-password-code" variant="text">
            I already have a code
          </Button>
          <Button component={RouterLink} to="/login" variant="text">
            Back to Login
          </Button>
        </Stack>
      </form>
    </Page>
  );
}
