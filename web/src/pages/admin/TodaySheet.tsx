import CampaignIcon from '@mui/icons-material/Campaign';
import CheckCircleIcon from '@mui/icons-material/CheckCircle';
import EventBusyIcon from '@mui/icons-material/EventBusy';
import HourglassEmptyIcon from '@mui/icons-material/HourglassEmpty';
import PhoneIcon from '@mui/icons-material/Phone';
import PhoneInTalkIcon from '@mui/icons-material/PhoneInTalk';
import PrintIcon from '@mui/icons-material/Print';
import TodayIcon from '@mui/icons-material/Today';
import UploadFileIcon from '@mui/icons-material/UploadFile';
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
import { Suspense, lazy, useEffect, useId, useState, type ReactElement } from 'react';
import { APPOINTMENT_STATUSES, type AdminAppointment, type AppointmentStatus, type CallSheet } from '@portal/contracts';
import { appointmentTime, dayInWords, fetchCallSheet, isDialable, setAppointmentStatus } from '../../api/appointments';
import { messageOf } from '../../api/http';
import { useNotify } from '../../notifications/notify-context';
import { SEPARATE_TOGGLES } from './separate-toggles';
import { PENDING_LABELS, STATUS_LABELS, inSendingOrder, messageInWords, outcomeInWords } from './appointment-words';

const ImportDialog = lazy(() => import('./ImportDialog'));
const AnnounceDialog = lazy(() => import('./AnnounceDialog'));

/** How often the sheet asks again, so that one performer's status change shows on the others' phones. */
export const CALL_SHEET_POLL_MS = 5000;

/** Each status with its own colour and icon, so that the chosen one reads at a glance (and not by a grey fill alone). */
const STATUS_LOOK: Record<AppointmentStatus, { color: string; icon: ReactElement }> = {
  waiting: { color: 'grey.700', icon: <HourglassEmptyIcon fontSize="small" /> },
  called: { color: 'info.main', icon: <PhoneInTalkIcon fontSize="small" /> },
  arrived: { color: 'success.main', icon: <CheckCircleIcon fontSize="small" /> },
  'no-show': { color: 'error.main', icon: <EventBusyIcon fontSize="small" /> },
};

/** The clock, moved on every half minute (what is past changes while the sheet stays open). */
function useNow(everyMs = 30_000): number {
  const [now, setNow] = useState(() => Date.now());
  useEffect(() => {
    const timer = setInterval(() => setNow(Date.now()), everyMs);
    return () => clearInterval(timer);
  }, [everyMs]);
  return now;
}

function CallSheetRow({
  entry,
  timeZone,
  past,
  onStatus,
  busy,
}: {
  entry: AdminAppointment;
  timeZone: string;
  past: boolean;
  onStatus: (status: AppointmentStatus) => void;
  busy: boolean;
}) {
  // Who they are: the account's name, else the box office's, else the address.
  const name = entry.full_name ?? entry.name ?? entry.email;
  const time = appointmentTime(entry.start, timeZone, 'time');
  const dialable = entry.call_number !== null && isDialable(entry.call_number);
  const phone = entry.call_number_readable ?? entry.call_number;
  return (
    <Paper
      component="li"
      variant="outlined"
      sx={{ p: 2, listStyle: 'none', breakInside: 'avoid', minWidth: 0, ...(past ? { bgcolor: 'grey.100', borderStyle: 'dashed' } : {}) }}
      aria-label={`${time} ${name}${past ? ' (past)' : ''}`}
    >
      <Stack direction="row" spacing={2} alignItems="flex-start">
        <Avatar
          src={entry.verification_photo_url ?? undefined}
          alt={entry.verification_photo_url ? `Verification photo of ${name}` : ''}
          variant="rounded"
          sx={{ width: 72, height: 72 }}
        >
          {name.slice(0, 1).toUpperCase()}
        </Avatar>
        <Box sx={{ minWidth: 0, flex: 1, overflowWrap: 'anywhere' }}>
          <Typography variant="h3" component="h3" sx={{ fontSize: '1.1rem', fontWeight: 600 }}>
            <time dateTime={entry.start}>{time}</time> · {name}
          </Typography>
          {entry.pronouns ? <Typography variant="body2">{entry.pronouns}</Typography> : null}
          {entry.address_status === 'confirmed' ? null : (
            <Typography variant="body2" color="text.secondary">
              {`${PENDING_LABELS[entry.address_status]}${name === entry.email ? '' : `: ${entry.email}`}`}
            </Typography>
          )}
          <Typography variant="body2" color="text.secondary">
            {entry.place}
            {entry.note ? ` — ${entry.note}` : ''}
          </Typography>
          {dialable ? (
            <Button
              component="a"
              href={`tel:${entry.call_number}`}
              variant="contained"
              startIcon={<PhoneIcon />}
              sx={{ mt: 1, whiteSpace: 'nowrap' }}
              aria-label={`Call ${name} at ${phone}`}
            >
              {phone}
            </Button>
          ) : null}
          {entry.phone ? null : (
            <Alert severity={dialable ? 'info' : 'warning'} sx={{ mt: 1 }}>
              {dialable ? `Texts off: ${entry.phone_problem}` : `No number to call: ${entry.phone_problem}`}
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
        sx={[
          SEPARATE_TOGGLES,
          {
            mt: 1.5,
            display: 'grid',
            // Two rows on a phone, one on a wider screen.
            gridTemplateColumns: 'repeat(2, 1fr)',
            '@media (min-width: 600px)': { gridTemplateColumns: 'repeat(4, 1fr)' },
            '@media print': { display: 'none' },
          },
        ]}
      >
        {APPOINTMENT_STATUSES.map((status) => (
          <ToggleButton
            key={status}
            value={status}
            sx={{
              minHeight: 44,
              gap: 0.75,
              color: 'text.primary',
              // The chosen status: filled in its own colour, white text, a heavier border; the others stay outlined.
              '&.Mui-selected, &.Mui-selected:hover': {
                bgcolor: STATUS_LOOK[status].color,
                color: 'common.white',
                fontWeight: 700,
                borderColor: STATUS_LOOK[status].color,
              },
            }}
          >
            {STATUS_LOOK[status].icon}
            {STATUS_LABELS[status]}
          </ToggleButton>
        ))}
      </ToggleButtonGroup>
      <Typography variant="body2" sx={{ display: 'none', '@media print': { display: 'block' }, mt: 1 }}>
        Status: {STATUS_LABELS[entry.status]} ☐ called ☐ arrived ☐ no-show
      </Typography>
      <Stack
        component="ul"
        spacing={0.5}
        useFlexGap
        flexWrap="wrap"
        direction="row"
        sx={{ p: 0, m: 0, mt: 1, listStyle: 'none' }}
        aria-label="Messages"
      >
        {inSendingOrder(entry.deliveries).map((delivery) => (
          <Chip
            component="li"
            key={delivery.key}
            size="small"
            label={`${messageInWords(delivery)}: ${outcomeInWords(delivery)}`}
            variant="outlined"
            // Long reasons wrap; a problem is marked by its border and weight, the text stays dark enough to read.
            sx={{
              height: 'auto',
              maxWidth: '100%',
              py: 0.25,
              mt: 0.5,
              '& .MuiChip-label': { whiteSpace: 'normal', overflowWrap: 'anywhere' },
              ...(delivery.state !== 'sent' ? { borderColor: 'warning.main', borderWidth: 2, fontWeight: 600 } : {}),
            }}
          />
        ))}
      </Stack>
    </Paper>
  );
}

function Section({
  title,
  entries,
  sheet,
  past,
  busy,
  onStatus,
}: {
  title: string;
  entries: AdminAppointment[];
  sheet: CallSheet;
  past: boolean;
  busy: string | null;
  onStatus: (entry: AdminAppointment, status: AppointmentStatus) => void;
}) {
  const headingId = useId();
  if (entries.length === 0) return null;
  return (
    <Box component="section" aria-labelledby={headingId} sx={{ mb: 3 }}>
      <Typography
        id={headingId}
        variant="h3"
        component="h3"
        sx={{ fontSize: '1.05rem', mb: 1, color: past ? 'text.secondary' : 'text.primary' }}
      >
        {`${title} (${entries.length})`}
      </Typography>
      <Stack component="ol" spacing={1.5} sx={{ p: 0, m: 0 }}>
        {entries.map((entry) => (
          <CallSheetRow
            key={entry.id}
            entry={entry}
            timeZone={sheet.time_zone}
            past={past}
            busy={busy === entry.id}
            onStatus={(status) => onStatus(entry, status)}
          />
        ))}
      </Stack>
    </Box>
  );
}

/**
 * The performers' call sheet: the day's appointments in time order, for a phone in a performer's
 * hand (a tap calls, the status buttons are large) and for paper (Print). It opens on today in the
 * event's time zone (the server's EVENT_TIMEZONE, whatever the phone's own zone), asks again every
 * few seconds so that every performer's phone shows the others' status changes, sets the
 * appointments that are over apart, and offers the box office's import and the announcements.
 */
export default function TodaySheet() {
  const notify = useNotify();
  const client = useQueryClient();
  const now = useNow();
  // null: today, as the server counts days.
  const [chosen, setChosen] = useState<string | null>(null);
  const [busy, setBusy] = useState<string | null>(null);
  const [dialog, setDialog] = useState<'import' | 'announce' | null>(null);
  const key = ['call-sheet', chosen ?? 'today'];
  const { data, error, isPending } = useQuery({
    queryKey: key,
    queryFn: ({ signal }) => fetchCallSheet(chosen, signal),
    refetchInterval: CALL_SHEET_POLL_MS,
    refetchIntervalInBackground: false,
    enabled: chosen === null || /^\d{4}-\d{2}-\d{2}$/.test(chosen),
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

  const isOver = (entry: AdminAppointment) => data !== undefined && Date.parse(entry.start) + data.appointment_minutes * 60_000 <= now;
  const upcoming = data?.appointments.filter((entry) => !isOver(entry)) ?? [];
  const over = data?.appointments.filter(isOver) ?? [];

  return (
    <Box>
      <Stack
        direction="row"
        spacing={1.5}
        useFlexGap
        flexWrap="wrap"
        alignItems="center"
        sx={{ mb: 2, '@media print': { display: 'none' } }}
      >
        <TextField
          label="Day"
          type="date"
          size="small"
          margin="none"
          value={chosen ?? data?.date ?? ''}
          onChange={(event) => setChosen(event.target.value || null)}
          slotProps={{ inputLabel: { shrink: true } }}
          sx={{ width: 'auto', flex: '1 1 170px', maxWidth: 220 }}
        />
        {chosen !== null ? (
          <Button variant="outlined" startIcon={<TodayIcon />} onClick={() => setChosen(null)}>
            Today
          </Button>
        ) : null}
        <Button variant="outlined" startIcon={<PrintIcon />} onClick={() => window.print()}>
          Print
        </Button>
        <Button variant="outlined" startIcon={<UploadFileIcon />} onClick={() => setDialog('import')} aria-haspopup="dialog">
          Import CSV
        </Button>
        <Button
          variant="outlined"
          startIcon={<CampaignIcon />}
          onClick={() => setDialog('announce')}
          aria-haspopup="dialog"
          disabled={!data}
        >
          Announce
        </Button>
      </Stack>
      {error ? (
        <Alert severity="error">{messageOf(error, 'The call sheet could not be loaded. It is tried again in a few seconds.')}</Alert>
      ) : null}
      {isPending && !error ? <Typography role="status">Loading…</Typography> : null}
      {data ? (
        <>
          <Typography variant="body2" color="text.secondary" sx={{ mb: 1.5 }} role="status">
            {data.appointments.length === 0
              ? `No appointments on ${dayInWords(data.date)}.`
              : `${data.appointments.length} appointment${data.appointments.length === 1 ? '' : 's'} on ${dayInWords(data.date)} (times in ${data.time_zone}).`}
          </Typography>
          <Section
            title="Coming up"
            entries={upcoming}
            sheet={data}
            past={false}
            busy={busy}
            onStatus={(entry, status) => void changeStatus(entry, status)}
          />
          <Section
            title="Past"
            entries={over}
            sheet={data}
            past
            busy={busy}
            onStatus={(entry, status) => void changeStatus(entry, status)}
          />
        </>
      ) : null}
      {dialog === 'import' ? (
        <Suspense fallback={null}>
          <ImportDialog onClose={() => setDialog(null)} onImported={() => void client.invalidateQueries({ queryKey: ['call-sheet'] })} />
        </Suspense>
      ) : null}
      {dialog === 'announce' && data ? (
        <Suspense fallback={null}>
          <AnnounceDialog date={data.date} timeZone={data.time_zone} onClose={() => setDialog(null)} />
        </Suspense>
      ) : null}
    </Box>
  );
}
