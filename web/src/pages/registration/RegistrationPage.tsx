import { zodResolver } from '@hookform/resolvers/zod';
import TextField from '@mui/material/TextField';
import { useState } from 'react';
import { useForm, type FieldErrors } from 'react-hook-form';
import { useNavigate } from 'react-router';
import type { z } from 'zod';
import { MESSAGES, registrationFormSchema, type RegistrationForm } from '@portal/contracts';
import { checkAvailability } from '../../api/account';
import { FormError, PhoneField, PronounsField, SubmitButton } from '../../components/FormParts';
import { Page } from '../../components/Page';
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
};

type Parsed = z.output<typeof registrationFormSchema>;

/** 'Register User': the form, the uniqueness check, then the verification photo. */
export default function RegistrationPage() {
  const navigate = useNavigate();
  const [formError, setFormError] = useState<string | null>(null);
  const [checked, setChecked] = useState<Parsed | null>(null);
  const registration = useRegisterWithPhoto();
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
    setChecked(form);
  };

  const submitPhoto = async (photo: Blob) => {
    if (!checked) return;
    const outcome = await registration.submit(checked, photo);
    if (outcome === 'failed') return;
    setChecked(null);
    reset(EMPTY_FORM);
    navigate(outcome === 'registered' ? '/user' : '/login', { replace: true });
  };

  const field = (name: keyof RegistrationForm) => ({
    ...register(name),
    error: Boolean(errors[name]),
    helperText: errors[name]?.message,
  });

  return (
    <Page title="Register User">
      <FormError>{formError}</FormError>
      <form onSubmit={handleSubmit(onValid, onInvalid)} noValidate>
        <TextField label="Full Name" autoComplete="name" required {...field('full_name')} />
        <TextField label="Username" autoComplete="username" autoCapitalize="none" spellCheck={false} required {...field('username')} />
        <PronounsField {...field('pronouns')} />
        <TextField label="Email" type="email" autoComplete="email" autoCapitalize="none" required {...field('email')} />
        <PhoneField {...field('phone_number')} />
        <PhoneField label="Confirm Phone Number" {...field('confirm_phone_number')} />
        <TextField label="Password" type="password" autoComplete="new-password" required {...field('password')} />
        <TextField label="Confirm Password" type="password" autoComplete="new-password" required {...field('confirm_password')} />
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
