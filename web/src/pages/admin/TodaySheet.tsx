import PhoneIcon from '@mui/icons-material/Phone';
import PrintIcon from '@mui/icons-material/Print';
import Alert from '@mui/material/Alert';
import Avatar from '@mui/material/Avatar';
import Box from '@mui/material/Box';
import Button from '@mui/material/Button';
import Chip from '@mui/material/Chip';
import Paper from '@mui/material/Paper';
import Stack from '@mui/material/Stack';
import TextField from '@mui/material/TextField';
import ToggleButton from '@mui/material/ToggleButton';
import ToggleButtonGroup from '@mui/material/ToggleButtonGroup';
import Typography from '@mui/material/Typography';
import { useQuery, useQueryClient } from '@tanstack/react-query';
import { useState } from 'react';
import { APPOINTMENT_STATUSES, type AdminAppointment, type AppointmentStatus, type CallSheet } from '@portal/contracts';
import { appointmentTime, fetchCallSheet, setAppointmentStatus, todayIn } from '../../api/appointments';
import { messageOf } from '../../api/http';
import { useNotify } from '../../notifications/notify-context';

/** How often the sheet asks again, so that one performer's status change shows on the others' phones. */
export const CALL_SHEET_POLL_MS = 5000;

const STATUS_LABELS: Record<AppointmentStatus, string> = { waiting: 'Waiting', called: 'Called', arrived: 'Arrived', 'no-show': 'No-show' };

/** What became of the reminders, in a few words per message. */
function reminderSummary(entry: AdminAppointment): { label: string; problem: boolean }[] {
  return entry.deliveries
    .filter((delivery) => delivery.kind !== 'announcement')
    .sort((a, b) => a.key.localeCompare(b.key))
    .map((delivery) => ({
      label: `${delivery.kind === 'confirmation' ? 'Confirmation' : `${delivery.offset} reminder`} (${delivery.channel === 'sms' ? 'text' : 'e-mail'}): ${delivery.state}${delivery.reason ? ` — ${delivery.reason}` : ''}`,
      problem: delivery.state !== 'sent',
    }));
}

function CallSheetRow({
  entry,
  timeZone,
  onStatus,
  busy,
}: {
  entry: AdminAppointment;
  timeZone: string;
  onStatus: (status: AppointmentStatus) => void;
  busy: boolean;
}) {
  const name = entry.full_name ?? entry.email;
  const time = appointmentTime(entry.start, timeZone, 'time');
  return (
    <Paper component="li" variant="outlined" sx={{ p: 2, listStyle: 'none', breakInside: 'avoid' }} aria-label={`${time} ${name}`}>
      <Stack direction="row" spacing={2} alignItems="flex-start">
        <Avatar
          src={entry.verification_photo_url ?? undefined}
          alt={entry.verification_photo_url ? `Verification photo of ${name}` : ''}
          variant="rounded"
          sx={{ width: 72, height: 72 }}
        >
          {name.slice(0, 1).toUpperCase()}
        </Avatar>
        <Box sx={{ minWidth: 0, flex: 1 }}>
          <Typography variant="h3" component="h3" sx={{ fontSize: '1.1rem', fontWeight: 600 }}>
            <time dateTime={entry.start}>{time}</time> · {name}
          </Typography>
          {entry.pronouns ? <Typography variant="body2">{entry.pronouns}</Typography> : null}
          <Typography variant="body2" color="text.secondary" sx={{ overflowWrap: 'anywhere' }}>
            {entry.place}
            {entry.note ? ` — ${entry.note}` : ''}
          </Typography>
          {entry.phone ? (
            <Button
              component="a"
              href={`tel:${entry.phone}`}
              variant="contained"
              startIcon={<PhoneIcon />}
              sx={{ mt: 1 }}
              aria-label={`Call ${name} at ${entry.phone}`}
            >
              {entry.phone}
            </Button>
          ) : (
            <Alert severity="warning" sx={{ mt: 1 }}>
              No number to call or text: {entry.phone_problem}
            </Alert>
          )}
        </Box>
      </Stack>
      <ToggleButtonGroup
        exclusive
        value={entry.status}
        onChange={(_event, value: AppointmentStatus | null) => value && value !== entry.status && onStatus(value)}
        aria-label={`Status of ${name}`}
        size="small"
        disabled={busy}
        sx={{ mt: 1.5, display: 'grid', gridTemplateColumns: 'repeat(4, 1fr)', '@media print': { display: 'none' } }}
      >
        {APPOINTMENT_STATUSES.map((status) => (
          <ToggleButton key={status} value={status} sx={{ minHeight: 44 }}>
            {STATUS_LABELS[status]}
          </ToggleButton>
        ))}
      </ToggleButtonGroup>
      <Typography variant="body2" sx={{ display: 'none', '@media print': { display: 'block' }, mt: 1 }}>
        Status: {STATUS_LABELS[entry.status]} ☐ called ☐ arrived ☐ no-show
      </Typography>
      <Stack direction="row" spacing={0.5} useFlexGap flexWrap="wrap" sx={{ mt: 1 }} aria-label="Reminders">
        {reminderSummary(entry).map((item) => (
          <Chip
            key={item.label}
            size="small"
            label={item.label}
            variant="outlined"
            // Long reasons wrap; a problem is marked by its border and weight, the text stays dark enough to read.
            sx={{
              height: 'auto',
              py: 0.25,
              '& .MuiChip-label': { whiteSpace: 'normal' },
              ...(item.problem ? { borderColor: 'warning.main', borderWidth: 2, fontWeight: 600 } : {}),
            }}
          />
        ))}
      </Stack>
    </Paper>
  );
}

/**
 * The performers' call sheet: the day's appointments in time order, for a phone in a performer's
 * hand (a tap calls, the status buttons are large) and for paper (Print). It asks again every
 * few seconds, so that every performer's phone shows the others' status changes.
 */
export default function TodaySheet() {
  const notify = useNotify();
  const client = useQueryClient();
  const [date, setDate] = useState(() => todayIn());
  const [busy, setBusy] = useState<string | null>(null);
  const key = ['call-sheet', date];
  const { data, error, isPending } = useQuery({
    queryKey: key,
    queryFn: ({ signal }) => fetchCallSheet(date, signal),
    refetchInterval: CALL_SHEET_POLL_MS,
    refetchIntervalInBackground: false,
    enabled: /^\d{4}-\d{2}-\d{2}$/.test(date),
  });

  const changeStatus = async (entry: AdminAppointment, status: AppointmentStatus) => {
    setBusy(entry.id);
    try {
      const updated = await setAppointmentStatus(entry.id, status);
      client.setQueryData<CallSheet>(
        key,
        (sheet) => sheet && { ...sheet, appointments: sheet.appointments.map((row) => (row.id === updated.id ? updated : row)) },
      );
    } catch (failure) {
      notify({ message: messageOf(failure, 'The status could not be saved. Please try again.'), severity: 'error' });
    } finally {
      setBusy(null);
    }
  };

  return (
    <Box>
      <Stack direction="row" spacing={1.5} alignItems="center" sx={{ mb: 2, '@media print': { display: 'none' } }}>
        <TextField
          label="Day"
          type="date"
          size="small"
          value={date}
          onChange={(event) => setDate(event.target.value)}
          slotProps={{ inputLabel: { shrink: true } }}
        />
        <Button variant="outlined" startIcon={<PrintIcon />} onClick={() => window.print()}>
          Print
        </Button>
      </Stack>
      {error ? (
        <Alert severity="error">{messageOf(error, 'The call sheet could not be loaded. It is tried again in a few seconds.')}</Alert>
      ) : null}
      {isPending && !error ? <Typography role="status">Loading…</Typography> : null}
      {data ? (
        <>
          <Typography variant="body2" color="text.secondary" sx={{ mb: 1 }} role="status">
            {data.appointments.length === 0
              ? `No appointments on ${data.date}.`
              : `${data.appointments.length} appointment${data.appointments.length === 1 ? '' : 's'} on ${data.date} (times in ${data.time_zone}).`}
          </Typography>
          <Stack component="ol" spacing={1.5} sx={{ p: 0, m: 0 }}>
            {data.appointments.map((entry) => (
              <CallSheetRow
                key={entry.id}
                entry={entry}
                timeZone={data.time_zone}
                busy={busy === entry.id}
                onStatus={(status) => void changeStatus(entry, status)}
              />
            ))}
          </Stack>
        </>
      ) : null}
    </Box>
  );
}
