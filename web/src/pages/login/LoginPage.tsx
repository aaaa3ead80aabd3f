import { zodResolver } from '@hookform/resolvers/zod';
import Button from '@mui/material/Button';
import Stack from '@mui/material/Stack';
import TextField from '@mui/material/TextField';
import { useState } from 'react';
import { useForm } from 'react-hook-form';
import { Link as RouterLink, useNavigate } from 'react-router';
import { MESSAGES, loginRequestSchema } from '@portal/contracts';
import { loginErrorMessage, useSignIn } from '../../auth/session';
import { FormError, SubmitButton } from '../../components/FormParts';
import { Page } from '../../components/Page';

/** /login, and the page shown in place of a protected page to someone not signed in. */
export default function LoginPage() {
  const signIn = useSignIn();
  const navigate = useNavigate();
  const [error, setError] = useState<string | null>(null);
  const {
    register,
    handleSubmit,
    formState: { isSubmitting },
  } = useForm({ resolver: zodResolver(loginRequestSchema), defaultValues: { username: '', password: '' } });

  const onValid = handleSubmit(
    async (credentials) => {
      setError(null);
      try {
        await signIn(credentials);
        // Replaces the login page in the history (the signed-in user is redirected away from it
        // at once too), so that Back does not land on a page that only sends them on again.
        void navigate('/home', { replace: true });
      } catch (failure) {
        setError(loginErrorMessage(failure));
      }
    },
    (errors) => setError(errors.username?.message ?? errors.password?.message ?? MESSAGES.loginInput),
  );

  return (
    <Page title="Login">
      <FormError>{error}</FormError>
      <form onSubmit={(event) => void onValid(event)} noValidate>
        <TextField
          label="Username or Email"
          autoComplete="username"
          autoCapitalize="none"
          spellCheck={false}
          required
          {...register('username')}
        />
        <TextField label="Password" type="password" autoComplete="current-password" required {...register('password')} />
        <Stack spacing={1.5} sx={{ mt: 2 }}>
          <SubmitButton submitting={isSubmitting}>Login</SubmitButton>
          <Button component={RouterLink} to="/reset-password-email" variant="text">
            Reset Password
          </Button>
          <Button component={RouterLink} to="/registration" variant="outlined">
            REGISTER
          </Button>
        </Stack>
      </form>
    </Page>
  );
}
