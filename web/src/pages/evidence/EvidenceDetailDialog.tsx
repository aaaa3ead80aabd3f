import DeleteIcon from '@mui/icons-material/Delete';
import EditIcon from '@mui/icons-material/Edit';
import Box from '@mui/material/Box';
import Chip from '@mui/material/Chip';
import Stack from '@mui/material/Stack';
import Typography from '@mui/material/Typography';
import type { Evidence } from '@portal/contracts';
import { EvidenceItemDialog } from '../../evidence/EvidenceItemDialog';
import { formatPosted } from '../../evidence/format';

interface EvidenceDetailDialogProps {
  item: Evidence | null;
  onClose: () => void;
  onEdit: () => void;
  onDelete: () => void;
}

/** One of the participant's items: media, Public badge, title, notes, location, date posted, Edit and Delete. */
export function EvidenceDetailDialog({ item, onClose, onEdit, onDelete }: EvidenceDetailDialogProps) {
  return (
    <EvidenceItemDialog
      item={item}
      onClose={onClose}
      details={(shown) => (
        <Stack spacing={1} sx={{ mt: 2 }}>
          {shown.is_public ? (
            <Box>
              <Chip label="Public" color="success" size="small" />
            </Box>
          ) : null}
          {shown.notes ? <Typography sx={{ whiteSpace: 'pre-wrap', overflowWrap: 'anywhere' }}>{shown.notes}</Typography> : null}
          <Typography variant="body2">{`Location: ${shown.location ?? 'Not given'}`}</Typography>
          <Typography variant="body2" color="text.secondary">
            {`Posted ${formatPosted(shown.date_posted)}`}
          </Typography>
          <Stack direction="row" spacing={1} sx={{ pt: 1 }}>
            <Chip icon={<EditIcon />} label="Edit" onClick={onEdit} color="primary" variant="outlined" />
            <Chip icon={<DeleteIcon />} label="Delete" onClick={onDelete} color="error" variant="outlined" />
          </Stack>
        </Stack>
      )}
    />
  );
}
