import { zodResolver } from '@hookform/resolvers/zod';
import Alert from '@mui/material/Alert';
import Button from '@mui/material/Button';
import Link from '@mui/material/Link';
import Stack from '@mui/material/Stack';
import TextField from '@mui/material/TextField';
import Typography from '@mui/material/Typography';
import { useState } from 'react';
import { useForm } from 'react-hook-form';
import { Link as RouterLink, useNavigate, useSearchParams } from 'react-router';
import type { z } from 'zod';
import { MESSAGES, checkCodeRequestSchema, checkEmailRequestSchema } from '@portal/contracts';
import { messageOf } from '../../api/http';
import { checkResetCode, requestAnotherResetCode } from '../../api/password-reset';
import { EmailField, SubmitButton } from '../../components/FormParts';
import { Page } from '../../components/Page';
import { readResetProgress, saveResetProgress } from './reset-progress';

type CodeForm = z.input<typeof checkCodeRequestSchema>;
type ParsedCode = z.output<typeof checkCodeRequestSchema>;

/** The server kills a code after this many wrong tries; then only another code helps. */
const TRIES_PER_CODE = 5;

/**
 * /reset-password-code, step 2: the address and the e-mailed code. Also where the e-mail's link
 * lands, perhaps in another tab or browser: the link carries the address (?email=).
 */
export default function ResetPasswordCodePage() {
  const navigate = useNavigate();
  const [searchParams] = useSearchParams();
  const [knownEmail] = useState(() => readResetProgress()?.email ?? searchParams.get('email') ?? '');
  const [error, setError] = useState<string | null>(null);
  const [notice, setNotice] = useState<string | null>(null);
  const [wrongTries, setWrongTries] = useState(0);
  const [resending, setResending] = useState(false);
  const {
    register,
    handleSubmit,
    trigger,
    getValues,
    resetField,
    formState: { errors, isSubmitting },
  } = useForm<CodeForm, unknown, ParsedCode>({
    resolver: zodResolver(checkCodeRequestSchema),
    defaultValues: { email: knownEmail, code: '' },
  });

  const check = handleSubmit(async ({ email, code }) => {
    setError(null);
    setNotice(null);
    try {
      const { codeMatches } = await checkResetCode(email, code);
      if (!codeMatches) {
        setWrongTries((tries) => tries + 1);
        setError(MESSAGES.incorrectCode);
        return;
      }
      saveResetProgress({ email, verifiedCode: code });
      void navigate('/reset-password-page');
    } catch (failure) {
      console.warn('the reset code was not checked', failure);
      setError(messageOf(failure, MESSAGES.internal));
    }
  });

  const requestAnother = async () => {
    setError(null);
    setNotice(null);
    if (!(await trigger('email'))) return;
    const parsed = checkEmailRequestSchema.safeParse({ email: getValues('email') });
    if (!parsed.success) return;
    setResending(true);
    try {
      const answer = await requestAnotherResetCode(parsed.data.email);
      saveResetProgress({ email: parsed.data.email });
      setWrongTries(0);
      resetField('code');
      setNotice(answer.message);
    } catch (failure) {
      console.warn('another reset code was not sent', failure);
      setError(messageOf(failure, MESSAGES.internal));
    } finally {
      setResending(false);
    }
  };

  const busy = isSubmitting || resending;
  return (
    <Page title="Reset Password">
      <Typography sx={{ mb: 1, overflowWrap: 'anywhere' }}>
        {knownEmail
          ? `We emailed a six-digit code to ${knownEmail}. Enter it below; it works for 15 minutes.`
          : 'Enter the email address of your account and the six-digit code we emailed you.'}
      </Typography>
      {error ? (
        <Alert severity="error" sx={{ my: 1 }}>
          {error}
          {error === MESSAGES.incorrectCode && wrongTries >= TRIES_PER_CODE
            ? ' This code can no longer be used: please request another code.'
            : null}
        </Alert>
      ) : null}
      {notice ? (
        <Alert severity="success" role="status" sx={{ my: 1 }}>
          {notice}
        </Alert>
      ) : null}
      <form onSubmit={(event) => void check(event)} noValidate>
        <EmailField {...register('email')} error={Boolean(errors.email)} helperText={errors.email?.message} />
        <TextField
          label="Code"
          autoComplete="one-time-code"
          required
          {...register('code')}
          error={Boolean(errors.code)}
          helperText={errors.code?.message}
          slotProps={{ htmlInput: { inputMode: 'numeric', pattern: '[0-9]*', maxLength: 6 } }}
        />
        <Typography variant="body2" sx={{ mt: 1 }}>
          {'No code, or too late? '}
          <Link
            component="button"
            type="button"
            variant="body2"
            onClick={() => void requestAnother()}
            disabled={busy}
            sx={{ minHeight: 48, verticalAlign: 'middle', fontWeight: 600 }}
          >
            Request another code
          </Link>
        </Typography>
        <Stack spacing={1.5} sx={{ mt: 3 }}>
          <SubmitButton submitting={isSubmitting} disabled={busy}>
            Check Code
          </SubmitButton>
          <Button component={RouterLink} to="/login" variant="text">
            Back to Login
          </Button>
        </Stack>
      </form>
    </Page>
  );
}
