import Chip from '@mui/material/Chip';
import List from '@mui/material/List';
import ListItem from '@mui/material/ListItem';
import ListItemButton from '@mui/material/ListItemButton';
import Stack from '@mui/material/Stack';
import Typography from '@mui/material/Typography';
import type { Evidence } from '@portal/contracts';
import { EvidencePreview } from '../../evidence/EvidencePreview';
import { formatPosted, kindName } from '../../evidence/format';

/** Items as rows for administrators: thumbnail, title, author, date and visibility. */
export function EvidenceRows({ items, label, onOpen }: { items: readonly Evidence[]; label: string; onOpen: (item: Evidence) => void }) {
  return (
    <List aria-label={label} disablePadding>
      {items.map((item) => (
        <ListItem key={item.id} disablePadding divider data-evidence-id={item.id} data-media-status={item.media_status}>
          <ListItemButton onClick={() => onOpen(item)} sx={{ gap: 1.5, alignItems: 'center', py: 1 }}>
            <EvidencePreview item={item} width={64} height={64} errorLines={1} />
            <Stack sx={{ minWidth: 0, flex: 1 }}>
              <Typography sx={{ fontWeight: 600, overflowWrap: 'anywhere' }}>{item.title}</Typography>
              <Typography variant="body2" color="text.secondary" sx={{ overflowWrap: 'anywhere' }}>
                {`${kindName(item.media_type)} · ${item.username} · ${formatPosted(item.date_posted)}`}
              </Typography>
            </Stack>
            <Chip label={item.is_public ? 'Public' : 'Private'} size="small" color={item.is_public ? 'success' : 'default'} />
          </ListItemButton>
        </ListItem>
      ))}
    </List>
  );
}
