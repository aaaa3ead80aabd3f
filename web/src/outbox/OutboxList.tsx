import CloudDoneIcon from '@mui/icons-material/CloudDone';
import CloudOffIcon from '@mui/icons-material/CloudOff';
import CloudUploadIcon from '@mui/icons-material/CloudUpload';
import ErrorOutlineIcon from '@mui/icons-material/ErrorOutline';
import Alert from '@mui/material/Alert';
import Box from '@mui/material/Box';
import Button from '@mui/material/Button';
import LinearProgress from '@mui/material/LinearProgress';
import Paper from '@mui/material/Paper';
import Stack from '@mui/material/Stack';
import Typography from '@mui/material/Typography';
import { useState } from 'react';
import { ConfirmDialog } from '../evidence/ConfirmDialog';
import { DONE_KEPT_MS, persistenceAnswer, removeEntry, retryEntry } from './runner';
import type { ShownEntry } from './useOutbox';

function kindOf(entry: ShownEntry): string {
  const type = entry.fileType ?? '';
  if (!entry.fileName && entry.size === 0) return 'Note';
  if (type.startsWith('image/')) return 'Photo';
  if (type.startsWith('video/')) return 'Video';
  if (type.startsWith('audio/')) return 'Audio';
  return 'File';
}

function percentOf(entry: ShownEntry): number {
  if (entry.state === 'done') return 100;
  if (entry.size === 0) return 0;
  return Math.min(100, Math.round(((entry.live ?? entry.sent) / entry.size) * 100));
}

/** One line of state, as the participant reads it. */
export function stateText(entry: ShownEntry, online: boolean): string {
  switch (entry.state) {
    case 'done':
      return 'Uploaded';
    case 'failed':
      return `Failed: ${entry.error ?? 'the upload did not finish'}`;
    case 'uploading':
      return entry.size > 0 ? `Uploading ${percentOf(entry)} %` : 'Sending…';
    default:
      return online ? 'Waiting to upload' : 'Waiting for network';
  }
}

/**
 * The outbox on the Evidence page: what this phone keeps until it is on the server, with its
 * state (waiting for network, uploading n %, failed with the reason, done), Retry and Delete.
 */
export function OutboxList({ entries: all, userId }: { entries: ShownEntry[]; userId: string }) {
  const [deleting, setDeleting] = useState<ShownEntry | null>(null);
  const online = typeof navigator === 'undefined' || navigator.onLine !== false;
  // 'Uploaded' is said for a minute; the item is in the list below by then.
  const entries = all.filter((entry) => entry.state !== 'done' || Date.now() - entry.updatedAt < DONE_KEPT_MS);
  if (entries.length === 0) return null;
  const pending = entries.some((entry) => entry.state !== 'done');
  return (
    <Box component="section" aria-labelledby="outbox-heading" sx={{ mb: 3 }}>
      <Typography id="outbox-heading" variant="h3" component="h2" gutterBottom>
        On this phone
      </Typography>
      {pending && persistenceAnswer() === 'refused' ? (
        <Alert severity="warning" sx={{ mb: 1.5 }}>
          This browser did not promise to keep the evidence below if the phone runs low on space. Keep the app open with a connection until
          it is uploaded.
        </Alert>
      ) : null}
      <Stack component="ul" spacing={1} sx={{ p: 0, m: 0, listStyle: 'none' }} aria-label="Evidence waiting to upload">
        {entries.map((entry) => {
          const text = stateText(entry, online);
          const Icon =
            entry.state === 'done'
              ? CloudDoneIcon
              : entry.state === 'failed'
                ? ErrorOutlineIcon
                : entry.state === 'uploading'
                  ? CloudUploadIcon
                  : CloudOffIcon;
          return (
            <Paper component="li" key={entry.id} variant="outlined" data-outbox-state={entry.state} sx={{ p: 1.5 }}>
              <Box sx={{ display: 'flex', alignItems: 'flex-start', gap: 1 }}>
                <Icon
                  aria-hidden="true"
                  color={entry.state === 'failed' ? 'error' : entry.state === 'done' ? 'success' : 'action'}
                  sx={{ mt: 0.25 }}
                />
                <Box sx={{ flexGrow: 1, minWidth: 0 }}>
                  <Typography sx={{ fontWeight: 600, overflowWrap: 'anywhere' }}>{`${kindOf(entry)}: ${entry.title}`}</Typography>
                  <Typography variant="body2" role="status" color={entry.state === 'failed' ? 'error' : 'text.secondary'}>
                    {text}
                  </Typography>
                </Box>
              </Box>
              {entry.state === 'uploading' && entry.size > 0 ? (
                <LinearProgress
                  variant="determinate"
                  value={percentOf(entry)}
                  aria-label={`Upload of ${entry.title}`}
                  aria-valuetext={`${percentOf(entry)}%`}
                  sx={{ mt: 1 }}
                />
              ) : null}
              {entry.state === 'failed' ? (
                <Stack direction="row" spacing={1} sx={{ mt: 1 }}>
                  <Button
                    size="small"
                    variant="outlined"
                    onClick={() => void retryEntry(userId, entry.id)}
                    aria-label={`Retry ${entry.title}`}
                  >
                    Retry
                  </Button>
                  <Button size="small" color="error" onClick={() => setDeleting(entry)} aria-label={`Delete ${entry.title}`}>
                    Delete
                  </Button>
                </Stack>
              ) : null}
            </Paper>
          );
        })}
      </Stack>
      <ConfirmDialog
        open={deleting !== null}
        title="Delete from this phone?"
        danger
        confirmLabel="Delete"
        onCancel={() => setDeleting(null)}
        onConfirm={() => {
          if (deleting) void removeEntry(deleting.id);
          setDeleting(null);
        }}
      >
        {`"${deleting?.title ?? ''}" has not reached the server. Deleting it here loses it.`}
      </ConfirmDialog>
    </Box>
  );
}
