import Avatar from '@mui/material/Avatar';
import Stack from '@mui/material/Stack';
import Typography from '@mui/material/Typography';
import type { Evidence } from '@portal/contracts';
import { DEFAULT_AVATAR_URL } from '../../components/pictures';
import { EvidenceItemDialog } from '../../evidence/EvidenceItemDialog';
import { formatPosted } from '../../evidence/format';

/** A public item: media, title, notes, who submitted it (with their avatar), when and where. */
export function ArchiveDialog({ item, onClose }: { item: Evidence | null; onClose: () => void }) {
  return (
    <EvidenceItemDialog
      item={item}
      onClose={onClose}
      details={(shown) => (
        <Stack spacing={1.5} sx={{ mt: 2 }}>
          {shown.notes ? <Typography sx={{ whiteSpace: 'pre-wrap', overflowWrap: 'anywhere' }}>{shown.notes}</Typography> : null}
          <Stack direction="row" spacing={1.5} alignItems="center">
            <Avatar
              src={shown.avatar_AWS_URL ?? DEFAULT_AVATAR_URL}
              alt=""
              slotProps={{ img: { onError: (event) => (event.currentTarget.src = DEFAULT_AVATAR_URL) } }}
              sx={{ width: 44, height: 44, bgcolor: 'grey.300' }}
            />
            <Stack>
              <Typography variant="body2">{`Submitted by ${shown.username}`}</Typography>
              <Typography variant="body2" color="text.secondary">
                {`Posted ${formatPosted(shown.date_posted)}`}
              </Typography>
            </Stack>
          </Stack>
          {shown.location ? <Typography variant="body2">{`Location: ${shown.location}`}</Typography> : null}
        </Stack>
      )}
    />
  );
}
