import Checkbox from '@mui/material/Checkbox';
import Chip from '@mui/material/Chip';
import List from '@mui/material/List';
import ListItem from '@mui/material/ListItem';
import ListItemButton from '@mui/material/ListItemButton';
import Stack from '@mui/material/Stack';
import Typography from '@mui/material/Typography';
import type { Evidence } from '@portal/contracts';
import { EvidencePreview } from '../../evidence/EvidencePreview';
import { formatPosted, kindName } from '../../evidence/format';

/** Checkboxes beside the rows: which are ticked, and a tick (with Shift held: a range). */
export interface RowSelection {
  isSelected: (id: string) => boolean;
  onToggle: (item: Evidence, index: number, range: boolean) => void;
}

interface EvidenceRowsProps {
  items: readonly Evidence[];
  label: string;
  onOpen: (item: Evidence) => void;
  selection?: RowSelection;
}

/** Items as rows for administrators: thumbnail, title, author, date, review state and visibility. */
export function EvidenceRows({ items, label, onOpen, selection }: EvidenceRowsProps) {
  return (
    <List aria-label={label} disablePadding>
      {items.map((item, index) => (
        <ListItem
          key={item.id}
          disablePadding
          divider
          data-evidence-id={item.id}
          data-media-status={item.media_status}
          data-review-status={item.review_status}
        >
          {selection ? (
            <Checkbox
              checked={selection.isSelected(item.id)}
              onClick={(event) => selection.onToggle(item, index, event.shiftKey)}
              slotProps={{ input: { 'aria-label': `Select ${item.title}` } }}
              sx={{ alignSelf: 'center', ml: { xs: -0.5, sm: 0 } }}
            />
          ) : null}
          <ListItemButton onClick={() => onOpen(item)} sx={{ gap: 1.5, alignItems: 'center', py: 1, pl: selection ? 0.5 : undefined }}>
            <EvidencePreview item={item} width={64} height={64} errorLines={1} />
            <Stack sx={{ minWidth: 0, flex: 1 }}>
              <Typography sx={{ fontWeight: 600, overflowWrap: 'anywhere' }}>{item.title}</Typography>
              <Typography variant="body2" color="text.secondary" sx={{ overflowWrap: 'anywhere' }}>
                {`${kindName(item.media_type)} · ${item.username} · ${formatPosted(item.date_posted)}`}
              </Typography>
            </Stack>
            <Stack direction={{ xs: 'column', sm: 'row' }} spacing={0.5} sx={{ alignItems: 'flex-end' }}>
              {item.review_status === 'new' ? <Chip label="New" size="small" variant="outlined" sx={{ fontWeight: 700 }} /> : null}
              <Chip label={item.is_public ? 'Public' : 'Private'} size="small" color={item.is_public ? 'success' : 'default'} />
            </Stack>
          </ListItemButton>
        </ListItem>
      ))}
    </List>
  );
}
