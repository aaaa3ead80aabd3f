import Alert from '@mui/material/Alert';
import Box from '@mui/material/Box';
import Button from '@mui/material/Button';
import Dialog from '@mui/material/Dialog';
import DialogActions from '@mui/material/DialogActions';
import DialogContent from '@mui/material/DialogContent';
import DialogTitle from '@mui/material/DialogTitle';
import FormControl from '@mui/material/FormControl';
import FormControlLabel from '@mui/material/FormControlLabel';
import FormLabel from '@mui/material/FormLabel';
import Radio from '@mui/material/Radio';
import RadioGroup from '@mui/material/RadioGroup';
import Stack from '@mui/material/Stack';
import TextField from '@mui/material/TextField';
import Typography from '@mui/material/Typography';
import useMediaQuery from '@mui/material/useMediaQuery';
import { useTheme } from '@mui/material/styles';
import { keepPreviousData, useQuery } from '@tanstack/react-query';
import { useEffect, useId, useRef, useState, type FormEvent } from 'react';
import { announceRequestSchema, type AnnounceRequest, type AnnounceResult } from '@portal/contracts';
import { dayInWords, previewAnnouncement, sendAnnouncement } from '../../api/appointments';
import { messageOf } from '../../api/http';
import { FormError, SubmitButton } from '../../components/FormParts';
import { ConfirmDialog } from '../../evidence/ConfirmDialog';
import { channelsInWords } from './appointment-words';

const MESSAGE_MAX = 600;

interface AnnounceForm {
  date: string;
  from: string;
  to: string;
  words: 'bad-weather' | 'own';
  message: string;
}

/** The form as the announce route takes it (a time left empty is the day's start or end). */
function requestOf(form: AnnounceForm): AnnounceRequest {
  return {
    date: form.date,
    ...(form.from ? { from: form.from } : {}),
    ...(form.to ? { to: form.to } : {}),
    ...(form.words === 'bad-weather' ? { text: 'bad-weather' as const } : { message: form.message }),
  };
}

/** "on Wednesday 1 July 2026 from 18:00 to 20:00" */
function selectionInWords(form: AnnounceForm): string {
  return `on ${dayInWords(form.date)}${form.from ? ` from ${form.from}` : ''}${form.to ? ` until ${form.to}` : ''}`;
}

/**
 * One message to the participants of a day, or of a time range of it, by e-mail and (where one can go) text: a ready
 * "bad weather" text (the server writes it, naming the library entryway) or one's own words. The
 * server counts whom it reaches by the same selection it sends to (a dry run), before anything is
 * sent; sending asks for a confirmation.
 */
export default function AnnounceDialog({ date, timeZone, onClose }: { date: string; timeZone: string; onClose: () => void }) {
  const theme = useTheme();
  const fullScreen = useMediaQuery(theme.breakpoints.down('sm'));
  const titleId = useId();
  const resultHeading = useRef<HTMLHeadingElement>(null);
  const [form, setForm] = useState<AnnounceForm>({ date, from: '', to: '', words: 'bad-weather', message: '' });
  const [errors, setErrors] = useState<Partial<Record<keyof AnnounceForm, string>>>({});
  const [confirming, setConfirming] = useState(false);
  const [sending, setSending] = useState(false);
  const [failure, setFailure] = useState<string | null>(null);
  const [sent, setSent] = useState<AnnounceResult | null>(null);

  const selection = { date: form.date, ...(form.from ? { from: form.from } : {}), ...(form.to ? { to: form.to } : {}) };
  const preview = useQuery({
    queryKey: ['announce-preview', selection, form.words],
    queryFn: ({ signal }) =>
      previewAnnouncement({ ...selection, ...(form.words === 'bad-weather' ? { text: 'bad-weather' } : {}) }, signal),
    enabled: /^\d{4}-\d{2}-\d{2}$/.test(form.date),
    placeholderData: keepPreviousData,
    staleTime: 0,
  });
  const recipients = preview.data?.recipients ?? 0;
  const words = form.words === 'bad-weather' ? (preview.data?.message ?? '') : form.message.trim();

  useEffect(() => {
    if (sent) resultHeading.current?.focus();
  }, [sent]);

  const field = (name: 'date' | 'from' | 'to' | 'message') => ({
    value: form[name],
    onChange: (event: { target: { value: string } }) => {
      setForm((current) => ({ ...current, [name]: event.target.value }));
      setErrors((current) => ({ ...current, [name]: undefined }));
    },
    error: Boolean(errors[name]),
    helperText: errors[name],
  });

  // The contracts' own rules (the server checks the same), each message under its field.
  const review = (event: FormEvent) => {
    event.preventDefault();
    setFailure(null);
    const checked = announceRequestSchema.safeParse(requestOf(form));
    if (!checked.success) {
      setErrors(Object.fromEntries(checked.error.issues.map((issue) => [String(issue.path[0] ?? 'message'), issue.message])));
      return;
    }
    if (form.from && form.to && form.from >= form.to) {
      setErrors({ to: 'The end must be after the start' });
      return;
    }
    setConfirming(true);
  };

  const send = async () => {
    setSending(true);
    try {
      setSent(await sendAnnouncement(requestOf(form)));
    } catch (error) {
      setFailure(messageOf(error, 'The announcement could not be sent. Please try again.'));
    } finally {
      setSending(false);
      setConfirming(false);
    }
  };

  const reach = `${recipients} participant${recipients === 1 ? '' : 's'}`;
  const countText = preview.isError
    ? messageOf(preview.error, 'Whom it reaches could not be counted.')
    : preview.data
      ? `It reaches ${reach} with an appointment ${selectionInWords(form)} (${timeZone}), ${channelsInWords(recipients, preview.data.by_text)}.`
      : 'Counting whom it reaches…';

  return (
    <Dialog open onClose={sending ? undefined : onClose} fullScreen={fullScreen} fullWidth maxWidth="sm" aria-labelledby={titleId}>
      <DialogTitle id={titleId}>Announce</DialogTitle>
      {sent ? (
        <>
          <DialogContent dividers>
            <Typography ref={resultHeading} tabIndex={-1} variant="h3" component="h3" sx={{ fontSize: '1.15rem', mb: 1, outline: 'none' }}>
              Sent
            </Typography>
            <Alert severity="success" role="status" sx={{ mb: 2 }}>
              {`The announcement is on its way to ${sent.recipients} participant${sent.recipients === 1 ? '' : 's'}, ${channelsInWords(sent.recipients, sent.by_text)}. What became of each message shows on the call sheet, under each person.`}
            </Alert>
            <Typography variant="body2" color="text.secondary">
              The message:
            </Typography>
            <Typography
              component="blockquote"
              sx={{ m: 0, mt: 0.5, pl: 1.5, borderLeft: 4, borderColor: 'divider', overflowWrap: 'anywhere' }}
            >
              {sent.message}
            </Typography>
          </DialogContent>
          <DialogActions sx={{ px: 3, py: 2 }}>
            <Button variant="contained" onClick={onClose}>
              Close
            </Button>
          </DialogActions>
        </>
      ) : (
        <Box component="form" noValidate onSubmit={review} aria-label="Announcement">
          <DialogContent dividers>
            <FormError>{failure}</FormError>
            <TextField label="Day" type="date" required {...field('date')} slotProps={{ inputLabel: { shrink: true } }} margin="dense" />
            <Stack direction="row" spacing={1.5}>
              <TextField
                label="From"
                type="time"
                {...field('from')}
                helperText={errors.from ?? 'Empty: the start of the day'}
                slotProps={{ inputLabel: { shrink: true } }}
                margin="dense"
              />
              <TextField
                label="Until"
                type="time"
                {...field('to')}
                helperText={errors.to ?? 'Empty: the end of the day'}
                slotProps={{ inputLabel: { shrink: true } }}
                margin="dense"
              />
            </Stack>
            <FormControl sx={{ mt: 2 }}>
              <FormLabel id={`${titleId}-words`}>The message</FormLabel>
              <RadioGroup
                aria-labelledby={`${titleId}-words`}
                value={form.words}
                onChange={(event) => setForm((current) => ({ ...current, words: event.target.value as AnnounceForm['words'] }))}
              >
                <FormControlLabel value="bad-weather" control={<Radio />} label="Bad weather (a ready text)" />
                <FormControlLabel value="own" control={<Radio />} label="My own words" />
              </RadioGroup>
            </FormControl>
            {form.words === 'own' ? (
              <TextField
                label="Your message"
                multiline
                minRows={3}
                required
                {...field('message')}
                helperText={
                  errors.message ??
                  `${form.message.trim().length} of ${MESSAGE_MAX} characters; texts longer than 160 characters arrive in parts`
                }
                slotProps={{ htmlInput: { maxLength: MESSAGE_MAX } }}
                margin="dense"
              />
            ) : (
              <Typography
                component="blockquote"
                sx={{ m: 0, mt: 1, pl: 1.5, borderLeft: 4, borderColor: 'divider', overflowWrap: 'anywhere' }}
              >
                {words || '…'}
              </Typography>
            )}
            <Alert
              severity={preview.isError ? 'error' : recipients === 0 && preview.data ? 'warning' : 'info'}
              sx={{ mt: 2 }}
              role="status"
            >
              {countText}
              {preview.data && recipients === 0 ? ' Nobody would get it: choose another day or time.' : ''}
            </Alert>
          </DialogContent>
          <DialogActions sx={{ px: 3, py: 2, gap: 1 }}>
            <Button onClick={onClose}>Cancel</Button>
            <SubmitButton submitting={sending} disabled={sending || !preview.data || recipients === 0}>
              {`Send to ${reach}`}
            </SubmitButton>
          </DialogActions>
        </Box>
      )}
      <ConfirmDialog
        open={confirming}
        title="Send this announcement?"
        busy={sending}
        confirmLabel={`Send to ${reach}`}
        onCancel={() => setConfirming(false)}
        onConfirm={() => void send()}
      >
        <Typography
          sx={{ mb: 1 }}
        >{`${reach} with an appointment ${selectionInWords(form)} get this, ${channelsInWords(recipients, preview.data?.by_text ?? 0)}. It cannot be called back.`}</Typography>
        <Typography component="blockquote" sx={{ m: 0, pl: 1.5, borderLeft: 4, borderColor: 'divider', overflowWrap: 'anywhere' }}>
          {words}
        </Typography>
      </ConfirmDialog>
    </Dialog>
  );
}
