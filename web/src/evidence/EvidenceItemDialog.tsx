import Button from '@mui/material/Button';
import Dialog from '@mui/material/Dialog';
import DialogActions from '@mui/material/DialogActions';
import DialogContent from '@mui/material/DialogContent';
import DialogTitle from '@mui/material/DialogTitle';
import useMediaQuery from '@mui/material/useMediaQuery';
import { useTheme } from '@mui/material/styles';
import { useId, type ReactNode } from 'react';
import type { Evidence } from '@portal/contracts';
import { EvidenceMedia } from './EvidenceMedia';

interface EvidenceItemDialogProps {
  /** The item shown; null closes the dialog (it stays mounted so that it closes with its transition). */
  item: Evidence | null;
  onClose: () => void;
  /** What stands under the media: the item's details, for the item. */
  details: (item: Evidence) => ReactNode;
}

/** One item in a dialog (full screen on phones): its title, its media, the given details and Close. */
export function EvidenceItemDialog({ item, onClose, details }: EvidenceItemDialogProps) {
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
            {details(item)}
          </DialogContent>
          <DialogActions>
            <Button onClick={onClose}>Close</Button>
          </DialogActions>
        </>
      ) : null}
    </Dialog>
  );
}
