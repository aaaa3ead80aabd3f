import DownloadIcon from '@mui/icons-material/Download';
import UploadFileIcon from '@mui/icons-material/UploadFile';
import Alert from '@mui/material/Alert';
import Box from '@mui/material/Box';
import Button from '@mui/material/Button';
import Dialog from '@mui/material/Dialog';
import DialogActions from '@mui/material/DialogActions';
import DialogContent from '@mui/material/DialogContent';
import DialogContentText from '@mui/material/DialogContentText';
import DialogTitle from '@mui/material/DialogTitle';
import LinearProgress from '@mui/material/LinearProgress';
import Typography from '@mui/material/Typography';
import useMediaQuery from '@mui/material/useMediaQuery';
import { useTheme } from '@mui/material/styles';
import { useEffect, useId, useMemo, useRef, useState } from 'react';
import { APPOINTMENT_CSV_MAX_BYTES, type AppointmentImportResult } from '@portal/contracts';
import { importAppointments } from '../../api/appointments';
import { messageOf } from '../../api/http';
import { FilePickButton } from '../../components/FilePickButton';
import { useObjectUrl } from '../../components/useObjectUrl';
import { ImportResultTable, countsInWords, countsOf, importLines, importResultCsv } from './ImportResultTable';

type Stage =
  | { step: 'choose' }
  | { step: 'checking'; file: File }
  | { step: 'preview'; file: File; result: AppointmentImportResult }
  | { step: 'importing'; file: File; result: AppointmentImportResult }
  | { step: 'done'; file: File; result: AppointmentImportResult };

/** "12 KB", "1.5 MB". */
const sizeOf = (bytes: number) =>
  bytes < 1024 * 1024
    ? `${Math.max(1, Math.round(bytes / 1024))} KB`
    : `${(bytes / 1024 / 1024).toLocaleString('en-GB', { maximumFractionDigits: 1 })} MB`;

/**
 * The box office's CSV, imported from the Today view: choose the file, see what the import will
 * do (the server's dry run: the same reading and decisions, nothing written), import it, then the
 * result line by line, downloadable as CSV.
 */
export default function ImportDialog({ onClose, onImported }: { onClose: () => void; onImported: () => void }) {
  const theme = useTheme();
  const fullScreen = useMediaQuery(theme.breakpoints.down('sm'));
  const titleId = useId();
  const [stage, setStage] = useState<Stage>({ step: 'choose' });
  const [error, setError] = useState<string | null>(null);
  const outcomeHeading = useRef<HTMLHeadingElement>(null);
  const working = stage.step === 'checking' || stage.step === 'importing';
  const result = 'result' in stage ? stage.result : null;
  const lines = useMemo(() => (result ? importLines(result) : []), [result]);
  const counts = countsOf(lines);
  const toApply = counts.created + counts.moved + counts.updated;
  const shown = stage.step === 'preview' || stage.step === 'done' ? stage : null;
  const csv = useMemo(
    () => (shown ? new Blob([importResultCsv(lines, shown.result.time_zone)], { type: 'text/csv' }) : null),
    [shown, lines],
  );
  const csvUrl = useObjectUrl(csv);

  // A new outcome (the preview, the result) is read from its heading, where the focus goes.
  useEffect(() => {
    if (stage.step === 'preview' || stage.step === 'done') outcomeHeading.current?.focus();
  }, [stage.step]);

  const check = async (file: File) => {
    setError(null);
    if (file.size > APPOINTMENT_CSV_MAX_BYTES) {
      setError(`${file.name} is ${sizeOf(file.size)}: the import takes files of at most ${sizeOf(APPOINTMENT_CSV_MAX_BYTES)}.`);
      return;
    }
    setStage({ step: 'checking', file });
    try {
      setStage({ step: 'preview', file, result: await importAppointments(file, true) });
    } catch (failure) {
      setError(messageOf(failure, 'The file could not be checked. Please try again.'));
      setStage({ step: 'choose' });
    }
  };

  const runImport = async () => {
    if (stage.step !== 'preview') return;
    const { file } = stage;
    setError(null);
    setStage({ step: 'importing', file, result: stage.result });
    try {
      const done = await importAppointments(file, false);
      setStage({ step: 'done', file, result: done });
      onImported();
    } catch (failure) {
      setError(messageOf(failure, 'The import failed; nothing may have been imported. Check the file again before importing it again.'));
      setStage({ step: 'preview', file, result: stage.result });
    }
  };

  const picker = (label: string, variant: 'contained' | 'outlined') => (
    <FilePickButton
      accept=".csv,text/csv,text/plain"
      variant={variant}
      startIcon={<UploadFileIcon />}
      onPick={(file) => void check(file)}
      disabled={working}
    >
      {label}
    </FilePickButton>
  );

  return (
    <Dialog
      open
      // While the file is on its way nothing closes the dialog: the person would not know what happened.
      onClose={working ? undefined : onClose}
      fullScreen={fullScreen}
      fullWidth
      maxWidth="md"
      aria-labelledby={titleId}
    >
      <DialogTitle id={titleId}>Import appointments</DialogTitle>
      <DialogContent dividers>
        {stage.step === 'choose' ? (
          <>
            <DialogContentText sx={{ mb: 2 }}>
              A CSV file from the box office: a header line naming the columns <b>email</b> and <b>start</b> (required) and <b>name</b>,{' '}
              <b>phone</b>, <b>place</b>, <b>note</b> (optional), in any order. A start such as 2026-07-01 18:30 is read in the event&apos;s
              time zone. One appointment per address: an address that has one is updated, or moved when its start changes. You see what will
              happen before anything is imported.
            </DialogContentText>
            {picker('Choose a CSV file', 'contained')}
          </>
        ) : (
          <Box sx={{ display: 'flex', flexWrap: 'wrap', alignItems: 'center', gap: 1, mb: 1 }}>
            <Typography variant="body2" sx={{ overflowWrap: 'anywhere', flex: '1 1 12em' }}>
              {`File: ${stage.file.name} (${sizeOf(stage.file.size)})`}
            </Typography>
            {stage.step === 'preview' || stage.step === 'done' ? picker('Choose another file', 'outlined') : null}
          </Box>
        )}
        {error ? (
          <Alert severity="error" sx={{ my: 2 }}>
            {error}
          </Alert>
        ) : null}
        {working ? (
          <Box sx={{ my: 2 }}>
            <Typography role="status" sx={{ mb: 1 }}>
              {stage.step === 'checking'
                ? `Checking ${stage.file.name}: reading every line…`
                : `Importing ${toApply} appointment${toApply === 1 ? '' : 's'} from ${stage.file.name}…`}
            </Typography>
            <LinearProgress aria-label={stage.step === 'checking' ? 'Checking the file' : 'Importing'} />
          </Box>
        ) : null}
        {stage.step === 'preview' || stage.step === 'done' ? (
          <Box>
            <Typography
              ref={outcomeHeading}
              tabIndex={-1}
              variant="h3"
              component="h3"
              sx={{ fontSize: '1.15rem', mt: 1, mb: 1, outline: 'none' }}
            >
              {stage.step === 'preview' ? 'What the import will do' : 'Imported'}
            </Typography>
            <Alert severity={counts.refused > 0 ? 'warning' : stage.step === 'done' ? 'success' : 'info'} sx={{ mb: 2 }} role="status">
              {stage.step === 'preview'
                ? toApply > 0
                  ? `Nothing is imported yet. Importing ${stage.file.name} will give: ${countsInWords(counts)}.`
                  : `Nothing to import: ${countsInWords(counts)}.`
                : `${stage.file.name} is imported: ${countsInWords(counts)}.`}
              {counts.refused > 0 ? ' Refused lines are not imported; the table says why.' : ''}
            </Alert>
            {shown && csvUrl ? (
              <Button
                component="a"
                href={csvUrl}
                download={`${shown.file.name.replace(/\.[^.]*$/, '')}-import-${shown.step === 'done' ? 'result' : 'preview'}.csv`}
                variant="outlined"
                startIcon={<DownloadIcon />}
                sx={{ mb: 2 }}
              >
                {shown.step === 'done' ? 'Download the result (CSV)' : 'Download the preview (CSV)'}
              </Button>
            ) : null}
            <ImportResultTable lines={lines} timeZone={stage.result.time_zone} planned={stage.step === 'preview'} />
          </Box>
        ) : null}
      </DialogContent>
      <DialogActions sx={{ px: 3, py: 1.5, gap: 1 }}>
        <Button onClick={onClose} disabled={working}>
          {stage.step === 'done' ? 'Close' : 'Cancel'}
        </Button>
        {stage.step === 'preview' || stage.step === 'importing' ? (
          <Button variant="contained" onClick={() => void runImport()} disabled={working || toApply === 0}>
            {`Import ${toApply} appointment${toApply === 1 ? '' : 's'}`}
          </Button>
        ) : null}
      </DialogActions>
    </Dialog>
  );
}
