import Avatar from '@mui/material/Avatar';
import Button from '@mui/material/Button';
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
import { DEFAULT_AVATAR_URL } from '../../components/pictures';
import { EvidenceMedia } from '../../evidence/EvidenceMedia';
import { formatPosted } from '../../evidence/format';

/** A public item: media, title, notes, who submitted it (with their avatar), when and where. */
export function ArchiveDialog({ item, onClose }: { item: Evidence | null; onClose: () => void }) {
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
            <Stack spacing={1.5} sx={{ mt: 2 }}>
              {item.notes ? <Typography sx={{ whiteSpace: 'pre-wrap', overflowWrap: 'anywhere' }}>{item.notes}</Typography> : null}
              <Stack direction="row" spacing={1.5} alignItems="center">
                <Avatar
                  src={item.avatar_AWS_URL ?? DEFAULT_AVATAR_URL}
                  alt=""
                  slotProps={{ img: { onError: (event) => ((event.currentTarget as HTMLImageElement).src = DEFAULT_AVATAR_URL) } }}
                  sx={{ width: 44, height: 44, bgcolor: 'grey.300' }}
                />
                <Stack>
                  <Typography variant="body2">{`Submitted by ${item.username}`}</Typography>
                  <Typography variant="body2" color="text.secondary">
                    {`Posted ${formatPosted(item.date_posted)}`}
                  </Typography>
                </Stack>
              </Stack>
              {item.location ? <Typography variant="body2">{`Location: ${item.location}`}</Typography> : null}
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
