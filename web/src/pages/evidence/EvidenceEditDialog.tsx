import { zodResolver } from '@hookform/resolvers/zod';
import UploadIcon from '@mui/icons-material/Upload';
import Alert from '@mui/material/Alert';
import Button from '@mui/material/Button';
import CircularProgress from '@mui/material/CircularProgress';
import Dialog from '@mui/material/Dialog';
import DialogActions from '@mui/material/DialogActions';
import DialogContent from '@mui/material/DialogContent';
import DialogTitle from '@mui/material/DialogTitle';
import TextField from '@mui/material/TextField';
import Typography from '@mui/material/Typography';
import { useQueryClient } from '@tanstack/react-query';
import { useId, useState } from 'react';
import { useForm } from 'react-hook-form';
import type { z } from 'zod';
import { updateEvidenceSchema, type Evidence } from '@portal/contracts';
import { updateEvidence } from '../../api/evidence';
import { messageOf } from '../../api/http';
import { FormError } from '../../components/FormParts';
import { FilePickButton } from '../../components/FilePickButton';
import { evidenceItemKey, refreshEvidence, replaceCachedItem } from '../../evidence/queries';

type EditInput = z.input<typeof updateEvidenceSchema>;
type EditOutput = z.output<typeof updateEvidenceSchema>;

/** Said before a participant saves changes to a published item (the server unpublishes it). */
export const PUBLIC_EDIT_NOTICE =
  'This evidence is in the public archive. When you save changes, it leaves the archive until an administrator has looked at it and publishes it again.';

const ACCEPT: Record<2 | 3 | 4, string> = { 2: 'image/*', 3: 'video/*', 4: 'audio/*' };

/**
 * Edits title and notes, and for media items may replace the file with one of the same kind.
 * It closes only with its own buttons (not by a click beside it, nor Escape): typed words are not lost.
 */
export default function EvidenceEditDialog({ item, onClose }: { item: Evidence; onClose: () => void }) {
  const client = useQueryClient();
  const titleId = useId();
  const noticeId = useId();
  const [file, setFile] = useState<File | null>(null);
  const [failure, setFailure] = useState<string | null>(null);
  const {
    register,
    handleSubmit,
    formState: { errors, isSubmitting },
  } = useForm<EditInput, unknown, EditOutput>({
    resolver: zodResolver(updateEvidenceSchema),
    defaultValues: { title: item.title, notes: item.notes },
  });

  const save = handleSubmit(async (values) => {
    setFailure(null);
    try {
      const updated = await updateEvidence(item.id, { title: values.title, notes: values.notes, file });
      client.removeQueries({ queryKey: evidenceItemKey(item.id) });
      replaceCachedItem(client, updated);
      void refreshEvidence(client);
      onClose();
    } catch (error) {
      console.warn('evidence update failed', error);
      setFailure(messageOf(error, 'The changes could not be saved. Please try again.'));
    }
  });

  return (
    <Dialog
      open
      onClose={() => undefined}
      disableEscapeKeyDown
      fullWidth
      maxWidth="sm"
      aria-labelledby={titleId}
      aria-describedby={item.is_public ? noticeId : undefined}
    >
      <form onSubmit={(event) => void save(event)} noValidate>
        <DialogTitle id={titleId}>Edit Evidence</DialogTitle>
        <DialogContent>
          <FormError>{failure}</FormError>
          {item.is_public ? (
            <Alert severity="info" id={noticeId} sx={{ mb: 2 }}>
              {PUBLIC_EDIT_NOTICE}
            </Alert>
          ) : null}
          <TextField label="Title" required {...register('title')} error={Boolean(errors.title)} helperText={errors.title?.message} />
          <TextField
            label="Notes"
            multiline
            minRows={3}
            {...register('notes')}
            error={Boolean(errors.notes)}
            helperText={errors.notes?.message}
          />
          {item.media_type !== 1 ? (
            <>
              <FilePickButton
                accept={ACCEPT[item.media_type]}
                variant="outlined"
                startIcon={<UploadIcon />}
                sx={{ mt: 2 }}
                onPick={setFile}
              >
                Replace File
              </FilePickButton>
              {file ? (
                <Typography variant="body2" color="text.secondary" sx={{ mt: 1, overflowWrap: 'anywhere' }}>
                  {`New file: ${file.name}`}
                </Typography>
              ) : null}
            </>
          ) : null}
        </DialogContent>
        <DialogActions sx={{ px: 3, pb: 2 }}>
          <Button onClick={onClose} disabled={isSubmitting}>
            Cancel
          </Button>
          <Button
            type="submit"
            variant="contained"
            disabled={isSubmitting}
            startIcon={isSubmitting ? <CircularProgress size={18} color="inherit" aria-hidden="true" /> : undefined}
          >
            Save
          </Button>
        </DialogActions>
      </form>
    </Dialog>
  );
}
