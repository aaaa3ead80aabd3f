import Alert from '@mui/material/Alert';
import Button, { type ButtonProps } from '@mui/material/Button';
import CircularProgress from '@mui/material/CircularProgress';
import TextField, { type TextFieldProps } from '@mui/material/TextField';
import type { SxProps, Theme } from '@mui/material/styles';
import type { ReactNode } from 'react';
import { PRONOUN_OPTIONS } from '@portal/contracts';

/** A form's error line above its fields; nothing while there is no error. */
export function FormError({ children, sx = { mb: 1 } }: { children: ReactNode; sx?: SxProps<Theme> }) {
  if (children === null || children === undefined || children === false || children === '') return null;
  return (
    <Alert severity="error" sx={sx}>
      {children}
    </Alert>
  );
}

interface SubmitButtonProps extends Omit<ButtonProps, 'type' | 'variant' | 'size' | 'startIcon'> {
  /** The form is being sent: the button shows a spinner (and is disabled unless `disabled` says otherwise). */
  submitting: boolean;
}

/** A form's main (submit) button, with a spinner while the form is being sent. */
export function SubmitButton({ submitting, disabled = submitting, children, ...rest }: SubmitButtonProps) {
  return (
    <Button
      type="submit"
      variant="contained"
      size="large"
      disabled={disabled}
      startIcon={submitting ? <CircularProgress size={20} color="inherit" aria-hidden="true" /> : undefined}
      {...rest}
    >
      {children}
    </Button>
  );
}

/** The e-mail address field of the reset pages (spread react-hook-form's `register('email')` into it). */
export function EmailField(props: TextFieldProps) {
  return <TextField label="Email" type="email" autoComplete="email" autoCapitalize="none" spellCheck={false} required {...props} />;
}

/**
 * A ten-digit phone number field (spread the form's registration of the field into it). It takes
 * the number as people type it ("06 3110 0548"): the shared rule drops spaces, dots and brackets
 * before counting the ten digits, so nothing is cut off while typing.
 */
export function PhoneField({ label = 'Phone Number', ...props }: TextFieldProps) {
  return (
    <TextField
      label={label}
      type="tel"
      autoComplete="tel-national"
      required
      {...props}
      slotProps={{ htmlInput: { inputMode: 'tel', minLength: 10, maxLength: 40 } }}
    />
  );
}

/** The pronouns, chosen from the fixed list ('' is 'Prefer not to say'). */
export function PronounsField(props: TextFieldProps) {
  return (
    <TextField select label="Pronouns" {...props} slotProps={{ select: { native: true }, inputLabel: { shrink: true } }}>
      {PRONOUN_OPTIONS.map((option) => (
        <option key={option} value={option}>
          {option === '' ? 'Prefer not to say' : option}
        </option>
      ))}
    </TextField>
  );
}
