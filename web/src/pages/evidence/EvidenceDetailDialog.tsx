import DeleteIcon from '@mui/icons-material/Delete';
import EditIcon from '@mui/icons-material/Edit';
import Box from '@mui/material/Box';
import Button from '@mui/material/Button';
import Chip from '@mui/material/Chip';
import Dialog from '@mui/material/Dialog';
import DialogActions from '@mui/material/DialogActions';
import DialogContent from '@mui/material/DialogContent';
import DialogTitle from '@mui/material/DialogTitle';
import Stack from '@mui/material/Stack';
import Typography from '@mui/material/Typography';
import useMediaQuery from '@mui/material/useMediaQuery';
import { useTheme } from '@mui/material/styles';
import { useId } from 'react';
import type { Evidence } from '@portal/contracts';
import { EvidenceMedia } from '../../evidence/EvidenceMedia';
import { formatPosted } from '../../evidence/format';

interface EvidenceDetailDialogProps {
  item: Evidence | null;
  onClose: () => void;
  onEdit: () => void;
  onDelete: () => void;
}

/** One of the participant's items: media, Public badge, title, notes, location, date posted, Edit and Delete. */
export function EvidenceDetailDialog({ item, onClose, onEdit, onDelete }: EvidenceDetailDialogProps) {
  const theme = useTheme();
  const fullScreen = useMediaQuery(theme.breakpoints.down('sm'));
  const titleId = useId();
  return (
    <Dialog open={item !== null} onClose={onClose} fullScreen={fullScreen} fullWidth maxWidth="md" aria-labelledby={titleId}>
      {item ? (
        <>
          <DialogTitle id={titleId} sx={{ overflowWrap: 'anywhere', pb: 1 }}>
            {item.title}
          </DialogTitle>
          <DialogContent>
            <EvidenceMedia item={item} />
            <Stack spacing={1} sx={{ mt: 2 }}>
              {item.is_public ? (
                <Box>
                  <Chip label="Public" color="success" size="small" />
                </Box>
              ) : null}
              {item.notes ? <Typography sx={{ whiteSpace: 'pre-wrap', overflowWrap: 'anywhere' }}>{item.notes}</Typography> : null}
              <Typography variant="body2">{`Location: ${item.location ?? 'Not given'}`}</Typography>
              <Typography variant="body2" color="text.secondary">
                {`Posted ${formatPosted(item.date_posted)}`}
              </Typography>
              <Stack direction="row" spacing={1} sx={{ pt: 1 }}>
                <Chip icon={<EditIcon />} label="Edit" onClick={onEdit} color="primary" variant="outlined" />
                <Chip icon={<DeleteIcon />} label="Delete" onClick={onDelete} color="error" variant="outlined" />
              </Stack>
            </Stack>
          </DialogContent>
          <DialogActions>
            <Button onClick={onClose}>Close</Button>
          </DialogActions>
        </>
      ) : null}
    </Dialog>
  );
}
