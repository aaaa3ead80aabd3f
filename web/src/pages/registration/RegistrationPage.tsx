import { zodResolver } from '@hookform/resolvers/zod';
import Checkbox from '@mui/material/Checkbox';
import FormControl from '@mui/material/FormControl';
import FormControlLabel from '@mui/material/FormControlLabel';
import FormHelperText from '@mui/material/FormHelperText';
import Link from '@mui/material/Link';
import TextField from '@mui/material/TextField';
import Typography from '@mui/material/Typography';
import { useId, useState } from 'react';
import { useForm, type FieldErrors } from 'react-hook-form';
import { useNavigate } from 'react-router';
import type { z } from 'zod';
import { MESSAGES, registrationFormSchema, type RegistrationForm } from '@portal/contracts';
import { checkAvailability } from '../../api/account';
import { FormError, PhoneField, PronounsField, SubmitButton } from '../../components/FormParts';
import { Page } from '../../components/Page';
import { usePublicConfig } from '../../config/usePublicConfig';
import { PhotoDialog } from './PhotoDialog';
import { useRegisterWithPhoto } from './useRegisterWithPhoto';

const EMPTY_FORM: RegistrationForm = {
  full_name: '',
  username: '',
  pronouns: '',
  email: '',
  phone_number: '',
  confirm_phone_number: '',
  password: '',
  confirm_password: '',
  accept_terms: false,
};

type Parsed = z.output<typeof registrationFormSchema>;

/** 'Register User': the form, the uniqueness check, then the verification photo. */
export default function RegistrationPage() {
  const navigate = useNavigate();
  const [formError, setFormError] = useState<string | null>(null);
  const [checked, setChecked] = useState<Parsed | null>(null);
  const registration = useRegisterWithPhoto();
  const { data: config } = usePublicConfig();
  const termsId = useId();
  const {
    register,
    handleSubmit,
    setError,
    reset,
    formState: { errors, isSubmitting },
  } = useForm<RegistrationForm, unknown, Parsed>({
    resolver: zodResolver(registrationFormSchema),
    defaultValues: EMPTY_FORM,
  });

  const onInvalid = (invalid: FieldErrors<RegistrationForm>) => {
    const missingCredentials =
      invalid.username?.message === MESSAGES.registrationInput || invalid.password?.message === MESSAGES.registrationInput;
    setFormError(missingCredentials ? MESSAGES.registrationInput : null);
  };

  const onValid = async (form: Parsed) => {
    setFormError(null);
    if (!config) {
      setFormError('The participation terms could not be loaded. Please reload the page.');
      return;
    }
    try {
      const check = await checkAvailability(form.username, form.email);
      if (check.exists) {
        setError('username', { type: 'server', message: check.message || MESSAGES.registrationFailed }, { shouldFocus: true });
        return;
      }
    } catch (error) {
      // Only logged: the registration itself refuses a taken name with a clear message.
      console.warn('uniqueness check failed', error);
    }
    registration.clearError();
    // The version of the terms shown on this page is the one accepted.
    setChecked({ ...form, terms_version: config.terms.version });
  };

  const submitPhoto = async (photo: Blob) => {
    if (!checked) return;
    const outcome = await registration.submit(checked, photo);
    if (outcome === 'failed') return;
    setChecked(null);
    reset(EMPTY_FORM);
    void navigate(outcome === 'registered' ? '/user' : '/login', { replace: true });
  };

  const field = (name: keyof RegistrationForm) => ({
    ...register(name),
    error: Boolean(errors[name]),
    helperText: errors[name]?.message,
  });

  return (
    <Page title="Register User">
      <FormError>{formError}</FormError>
      <form onSubmit={(event) => void handleSubmit(onValid, onInvalid)(event)} noValidate>
        <TextField label="Full Name" autoComplete="name" required {...field('full_name')} />
        <TextField label="Username" autoComplete="username" autoCapitalize="none" spellCheck={false} required {...field('username')} />
        <PronounsField {...field('pronouns')} />
        <TextField label="Email" type="email" autoComplete="email" autoCapitalize="none" required {...field('email')} />
        <PhoneField {...field('phone_number')} />
        <PhoneField label="Confirm Phone Number" {...field('confirm_phone_number')} />
        <TextField label="Password" type="password" autoComplete="new-password" required {...field('password')} />
        <TextField label="Confirm Password" type="password" autoComplete="new-password" required {...field('confirm_password')} />
        <FormControl error={Boolean(errors.accept_terms)} required sx={{ mt: 2 }}>
          <Typography id={termsId} variant="body2" sx={{ whiteSpace: 'pre-line' }}>
            {config?.terms.text ?? ''}
            {config?.terms.url ? (
              <>
                {config.terms.text ? ' ' : ''}
                <Link href={config.terms.url} target="_blank" rel="noopener noreferrer">
                  Read the participation terms
                </Link>
              </>
            ) : null}
          </Typography>
          <FormControlLabel
            control={<Checkbox {...register('accept_terms')} slotProps={{ input: { 'aria-describedby': termsId } }} />}
            label={`I accept the participation terms${config ? ` (version ${config.terms.version})` : ''}`}
          />
          {errors.accept_terms ? <FormHelperText>{errors.accept_terms.message}</FormHelperText> : null}
        </FormControl>
        <SubmitButton submitting={isSubmitting} fullWidth sx={{ mt: 3 }}>
          Register
        </SubmitButton>
      </form>
      <PhotoDialog
        open={checked !== null}
        busy={registration.busy}
        error={registration.error}
        onClose={() => setChecked(null)}
        onSubmit={(photo) => void submitPhoto(photo)}
      />
    </Page>
  );
}
