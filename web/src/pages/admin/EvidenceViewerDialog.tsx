import DeleteIcon from '@mui/icons-material/Delete';
import EditIcon from '@mui/icons-material/Edit';
import SaveIcon from '@mui/icons-material/Save';
import Alert from '@mui/material/Alert';
import Button from '@mui/material/Button';
import Chip from '@mui/material/Chip';
import Dialog from '@mui/material/Dialog';
import DialogActions from '@mui/material/DialogActions';
import DialogContent from '@mui/material/DialogContent';
import DialogTitle from '@mui/material/DialogTitle';
import FormControlLabel from '@mui/material/FormControlLabel';
import Stack from '@mui/material/Stack';
import Switch from '@mui/material/Switch';
import TextField from '@mui/material/TextField';
import Typography from '@mui/material/Typography';
import useMediaQuery from '@mui/material/useMediaQuery';
import { useTheme } from '@mui/material/styles';
import { useQueryClient } from '@tanstack/react-query';
import { useId, useState } from 'react';
import { MESSAGES, updateEvidenceSchema, type Evidence } from '@portal/contracts';
import { markItemReviewed, toggleClearance } from '../../api/admin';
import { deleteEvidence, fetchEvidenceItem, updateEvidence } from '../../api/evidence';
import { messageOf } from '../../api/http';
import { ConfirmDialog } from '../../evidence/ConfirmDialog';
import { EvidenceMedia } from '../../evidence/EvidenceMedia';
import { formatPosted } from '../../evidence/format';
import { refreshEvidence, removeCachedItem, replaceCachedItem } from '../../evidence/queries';
import { useNotify } from '../../notifications/notify-context';
import { FacesPanel } from './FacesPanel';

interface EvidenceViewerDialogProps {
  item: Evidence;
  onChanged: (item: Evidence) => void;
  onClose: () => void;
}

/**
 * An administrator's view of one item: the media (audio player, video or picture), title, notes,
 * location; Edit/Save and Delete; and the public switch behind a confirmation.
 */
export function EvidenceViewerDialog({ item, onChanged, onClose }: EvidenceViewerDialogProps) {
  const client = useQueryClient();
  const notify = useNotify();
  const theme = useTheme();
  const fullScreen = useMediaQuery(theme.breakpoints.down('sm'));
  const titleId = useId();
  const [editing, setEditing] = useState(false);
  const [draft, setDraft] = useState({ title: item.title, notes: item.notes });
  const [problem, setProblem] = useState<string | null>(null);
  const [saving, setSaving] = useState(false);
  const [confirm, setConfirm] = useState<'delete' | 'visibility' | null>(null);
  const [busy, setBusy] = useState(false);

  const changed = (updated: Evidence) => {
    replaceCachedItem(client, updated);
    void refreshEvidence(client);
    onChanged(updated);
  };

  const save = async () => {
    const parsed = updateEvidenceSchema.safeParse(draft);
    if (!parsed.success) {
      setProblem(parsed.error.issues[0]?.message ?? MESSAGES.titleRequired);
      return;
    }
    setSaving(true);
    setProblem(null);
    try {
      changed(await updateEvidence(item.id, parsed.data));
      setEditing(false);
    } catch (error) {
      console.warn('evidence update failed', error);
      setProblem(messageOf(error, 'The changes could not be saved. Please try again.'));
    } finally {
      setSaving(false);
    }
  };

  const changeVisibility = async () => {
    setBusy(true);
    try {
      changed(await toggleClearance(item.id));
      setConfirm(null);
    } catch (error) {
      console.warn('visibility change failed', error);
      setConfirm(null);
      setProblem(messageOf(error, 'The visibility could not be changed. Please try again.'));
    } finally {
      setBusy(false);
    }
  };

  const review = async () => {
    setBusy(true);
    try {
      changed(await markItemReviewed(item.id));
    } catch (error) {
      console.warn('mark reviewed failed', error);
      setProblem(messageOf(error, 'The item could not be marked reviewed. Please try again.'));
    } finally {
      setBusy(false);
    }
  };

  const remove = async () => {
    setBusy(true);
    try {
      await deleteEvidence(item.id);
      removeCachedItem(client, item.id);
      void refreshEvidence(client);
      notify({ message: MESSAGES.evidenceDeleted, severity: 'success' });
      setConfirm(null);
      onClose();
    } catch (error) {
      console.warn('evidence delete failed', error);
      setConfirm(null);
      notify({ message: MESSAGES.evidenceDeleteFailed, severity: 'error' });
    } finally {
      setBusy(false);
    }
  };

  return (
    <>
      <Dialog
        open={confirm === null}
        onClose={saving ? undefined : onClose}
        fullScreen={fullScreen}
        fullWidth
        maxWidth="md"
        aria-labelledby={titleId}
      >
        <DialogTitle id={titleId} sx={{ overflowWrap: 'anywhere', pb: 1 }}>
          {editing ? 'Edit Evidence' : item.title}
        </DialogTitle>
        <DialogContent>
          {(item.media_type === 2 || item.media_type === 3) && item.media_status === 'ready' && item.aws_url ? (
            <FacesPanel
              item={item}
              onChanged={() => {
                fetchEvidenceItem(item.id).then(changed, (error: unknown) => console.warn('item refresh failed', error));
              }}
            />
          ) : (
            <EvidenceMedia item={item} />
          )}
          <Stack spacing={1} sx={{ mt: 2 }}>
            {problem ? <Alert severity="error">{problem}</Alert> : null}
            {editing ? (
              <>
                <TextField
                  label="Title"
                  required
                  value={draft.title}
                  onChange={(event) => setDraft({ ...draft, title: event.target.value })}
                />
                <TextField
                  label="Notes"
                  multiline
                  minRows={3}
                  value={draft.notes}
                  onChange={(event) => setDraft({ ...draft, notes: event.target.value })}
                />
              </>
            ) : (
              <>
                {item.notes ? <Typography sx={{ whiteSpace: 'pre-wrap', overflowWrap: 'anywhere' }}>{item.notes}</Typography> : null}
                <Typography variant="body2">{`Location: ${item.location ?? 'Not given'}`}</Typography>
              </>
            )}
            <Typography variant="body2" color="text.secondary">
              {`Submitted by ${item.username} · ${formatPosted(item.date_posted)}`}
            </Typography>
            <Stack direction="row" sx={{ alignItems: 'center', flexWrap: 'wrap', gap: 1 }}>
              <FormControlLabel
                control={<Switch checked={item.is_public} onChange={() => setConfirm('visibility')} />}
                label={item.is_public ? 'Public' : 'Private'}
              />
              {item.review_status === 'new' ? (
                <Button variant="outlined" size="small" disabled={busy || saving} onClick={() => void review()}>
                  Mark Reviewed
                </Button>
              ) : (
                <Typography variant="body2" color="text.secondary">
                  Reviewed
                </Typography>
              )}
            </Stack>
            <Stack direction="row" spacing={1}>
              {editing ? (
                <>
                  <Chip icon={<SaveIcon />} label="Save" color="primary" onClick={() => void save()} disabled={saving} />
                  <Chip
                    label="Cancel"
                    variant="outlined"
                    disabled={saving}
                    onClick={() => {
                      setEditing(false);
                      setProblem(null);
                    }}
                  />
                </>
              ) : (
                <Chip
                  icon={<EditIcon />}
                  label="Edit"
                  color="primary"
                  variant="outlined"
                  onClick={() => {
                    setDraft({ title: item.title, notes: item.notes });
                    setEditing(true);
                  }}
                />
              )}
              <Chip
                icon={<DeleteIcon />}
                label="Delete"
                color="error"
                variant="outlined"
                onClick={() => setConfirm('delete')}
                disabled={saving}
              />
            </Stack>
          </Stack>
        </DialogContent>
        <DialogActions>
          <Button onClick={onClose} disabled={saving}>
            Close
          </Button>
        </DialogActions>
      </Dialog>
      <ConfirmDialog
        open={confirm === 'visibility'}
        title="Confirm Visibility Change"
        busy={busy}
        onCancel={() => setConfirm(null)}
        onConfirm={() => void changeVisibility()}
      >
        {item.is_public
          ? 'Make this evidence private? It will no longer be shown in the public archive.'
          : 'Make this evidence public? Anyone will see it in the public archive.'}
      </ConfirmDialog>
      <ConfirmDialog
        open={confirm === 'delete'}
        title="Confirm Delete"
        danger
        busy={busy}
        onCancel={() => setConfirm(null)}
        onConfirm={() => void remove()}
      >
        Are you sure you want to delete this evidence?
      </ConfirmDialog>
    </>
  );
}
