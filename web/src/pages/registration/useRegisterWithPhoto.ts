import { useState } from 'react';
import { MESSAGES, type RegisterRequest } from '@portal/contracts';
import { ApiRequestError, messageOf } from '../../api/http';
import { register } from '../../api/account';
import { useSignIn } from '../../auth/session';
import { useNotify } from '../../notifications/notify-context';

/** 'registered': signed in; 'signed-out': the account exists but the login after it failed. */
export type RegistrationOutcome = 'registered' | 'signed-out' | 'failed';

/** Register (multipart, with the photo), then log in with the same credentials, then the toast. */
export function useRegisterWithPhoto() {
  const signIn = useSignIn();
  const notify = useNotify();
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);

  const submit = async (fields: RegisterRequest, photo: Blob): Promise<RegistrationOutcome> => {
    setBusy(true);
    setError(null);
    try {
      await register(fields, photo);
    } catch (failure) {
      console.warn('registration failed', failure);
      // Too many registrations from this network: only that, and to wait (nothing was wrong with the form).
      if (failure instanceof ApiRequestError && failure.status === 429) {
        setError(failure.message || MESSAGES.tooManyRegistrations);
        setBusy(false);
        return 'failed';
      }
      // The spec's sentence first; then what the server refused, when it said (a taken name, a photo it cannot read).
      const detail = messageOf(failure, '');
      setError(detail && detail !== MESSAGES.registrationFailed ? `${MESSAGES.registrationFailed} ${detail}` : MESSAGES.registrationFailed);
      setBusy(false);
      return 'failed';
    }
    let outcome: RegistrationOutcome = 'registered';
    try {
      await signIn({ username: fields.username, password: fields.password });
    } catch (failure) {
      console.warn('login after registration failed', failure);
      outcome = 'signed-out';
    }
    setBusy(false);
    notify({ message: MESSAGES.newUserCreated, severity: 'success', autoHideMs: 6000 });
    return outcome;
  };

  return { submit, busy, error, clearError: () => setError(null) };
}
