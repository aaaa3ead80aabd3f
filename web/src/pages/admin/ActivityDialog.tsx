import DownloadIcon from '@mui/icons-material/Download';
import Box from '@mui/material/Box';
import Button from '@mui/material/Button';
import Dialog from '@mui/material/Dialog';
import DialogActions from '@mui/material/DialogActions';
import DialogContent from '@mui/material/DialogContent';
import DialogTitle from '@mui/material/DialogTitle';
import List from '@mui/material/List';
import ListItem from '@mui/material/ListItem';
import MenuItem from '@mui/material/MenuItem';
import Stack from '@mui/material/Stack';
import TextField from '@mui/material/TextField';
import Typography from '@mui/material/Typography';
import useMediaQuery from '@mui/material/useMediaQuery';
import { useTheme } from '@mui/material/styles';
import { useInfiniteQuery } from '@tanstack/react-query';
import { useId, useMemo, useState, type FormEvent } from 'react';
import { AUDIT_ACTIONS } from '@portal/contracts';
import { activityCsvUrl, fetchActivityPage, firstActivityPage, type ActivityFilter } from '../../api/admin';
import { messageOf } from '../../api/http';
import { LoadFailedAlert } from '../../components/LoadFailedAlert';
import { LoadMore } from '../../evidence/LoadMore';
import { ACTION_LABELS, changesOf, targetOf } from './activity-labels';

interface FilterForm {
  actor: string;
  action: string;
  target: string;
  from: string;
  to: string;
}

const EMPTY: FilterForm = { actor: '', action: '', target: '', from: '', to: '' };

/** A datetime-local value (the browser's time zone) as ISO 8601, or nothing. */
function isoOf(local: string): string | undefined {
  if (!local) return undefined;
  const time = new Date(local);
  return Number.isNaN(time.getTime()) ? undefined : time.toISOString();
}

function toFilter(form: FilterForm): ActivityFilter {
  return {
    ...(form.actor.trim() ? { actor: form.actor.trim() } : {}),
    ...(form.action ? { action: form.action } : {}),
    ...(form.target.trim() ? { target: form.target.trim() } : {}),
    ...(isoOf(form.from) ? { from: isoOf(form.from) } : {}),
    ...(isoOf(form.to) ? { to: isoOf(form.to) } : {}),
  };
}

/**
 * The audit log (administrators): who did what, when, newest first, with filters, endless
 * scrolling and the same selection as a CSV download.
 */
export default function ActivityDialog({ open, onClose }: { open: boolean; onClose: () => void }) {
  const theme = useTheme();
  const fullScreen = useMediaQuery(theme.breakpoints.down('sm'));
  const titleId = useId();
  const [form, setForm] = useState<FilterForm>(EMPTY);
  const [filter, setFilter] = useState<ActivityFilter>({});
  const query = useInfiniteQuery({
    queryKey: ['admin-activity', filter],
    queryFn: ({ pageParam, signal }) => fetchActivityPage(pageParam, signal),
    initialPageParam: firstActivityPage(filter),
    getNextPageParam: (last) => last.next ?? undefined,
    enabled: open,
    staleTime: 0,
  });
  const entries = useMemo(() => query.data?.pages.flatMap((page) => page.items) ?? [], [query.data]);
  const field = (name: keyof FilterForm) => ({
    value: form[name],
    onChange: (event: { target: { value: string } }) => setForm((current) => ({ ...current, [name]: event.target.value })),
  });
  const apply = (event: FormEvent) => {
    event.preventDefault();
    setFilter(toFilter(form));
  };

  let content;
  if (query.isPending) content = <Typography role="status">Loading...</Typography>;
  else if (query.isError && entries.length === 0)
    content = (
      <LoadFailedAlert onRetry={() => void query.refetch()}>{messageOf(query.error, 'The activity could not be loaded.')}</LoadFailedAlert>
    );
  else if (entries.length === 0) content = <Typography role="status">Nothing recorded matches these filters.</Typography>;
  else
    content = (
      <List aria-label="Activity" disablePadding>
        {entries.map((entry) => (
          <ListItem key={entry.id} divider data-audit-id={entry.id} sx={{ display: 'block', py: 1.25 }}>
            <Typography sx={{ fontWeight: 600, overflowWrap: 'anywhere' }}>
              {`${ACTION_LABELS[entry.action] ?? entry.action}: ${targetOf(entry)}`}
            </Typography>
            <Typography variant="body2" color="text.secondary">
              <time dateTime={entry.at}>{new Date(entry.at).toLocaleString()}</time>
              {` · by ${entry.actor_username ?? 'a deleted account'}`}
            </Typography>
            {changesOf(entry).map((change) => (
              <Typography key={change} variant="body2" sx={{ overflowWrap: 'anywhere' }}>
                {change}
              </Typography>
            ))}
            {entry.details && typeof entry.details.changed === 'number' ? (
              <Typography variant="body2">{`${entry.details.changed} ${entry.details.changed === 1 ? 'item' : 'items'} changed`}</Typography>
            ) : null}
          </ListItem>
        ))}
      </List>
    );

  return (
    <Dialog open={open} onClose={onClose} fullScreen={fullScreen} fullWidth maxWidth="md" aria-labelledby={titleId}>
      <DialogTitle id={titleId}>Activity</DialogTitle>
      <DialogContent dividers>
        <Box component="form" role="search" aria-label="Filter activity" onSubmit={apply} sx={{ mb: 2 }}>
          <Stack direction={{ xs: 'column', sm: 'row' }} spacing={1.5} sx={{ mb: 1.5 }}>
            <TextField label="Administrator" size="small" fullWidth {...field('actor')} helperText="Username or id" />
            <TextField select label="Action" size="small" fullWidth {...field('action')}>
              <MenuItem value="">Every action</MenuItem>
              {AUDIT_ACTIONS.map((action) => (
                <MenuItem key={action} value={action}>
                  {ACTION_LABELS[action]}
                </MenuItem>
              ))}
            </TextField>
            <TextField label="Item or user id" size="small" fullWidth {...field('target')} />
          </Stack>
          <Stack direction={{ xs: 'column', sm: 'row' }} spacing={1.5} sx={{ alignItems: { sm: 'center' } }}>
            <TextField
              label="From"
              type="datetime-local"
              size="small"
              fullWidth
              slotProps={{ inputLabel: { shrink: true } }}
              {...field('from')}
            />
            <TextField
              label="To"
              type="datetime-local"
              size="small"
              fullWidth
              slotProps={{ inputLabel: { shrink: true } }}
              {...field('to')}
            />
            <Stack direction="row" spacing={1} sx={{ flexShrink: 0 }}>
              <Button type="submit" variant="contained">
                Apply
              </Button>
              <Button
                onClick={() => {
                  setForm(EMPTY);
                  setFilter({});
                }}
              >
                Clear
              </Button>
            </Stack>
          </Stack>
        </Box>
        {content}
        <LoadMore hasMore={query.hasNextPage} loading={query.isFetchingNextPage} onLoadMore={() => void query.fetchNextPage()} />
      </DialogContent>
      <DialogActions sx={{ flexWrap: 'wrap', gap: 1 }}>
        <Button component="a" href={activityCsvUrl(filter)} download startIcon={<DownloadIcon />}>
          Download CSV
        </Button>
        <Button onClick={onClose} variant="contained">
          Close
        </Button>
      </DialogActions>
    </Dialog>
  );
}
