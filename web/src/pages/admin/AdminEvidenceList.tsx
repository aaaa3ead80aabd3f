import Box from '@mui/material/Box';
import ButtonBase from '@mui/material/ButtonBase';
import Typography from '@mui/material/Typography';
import type { SxProps, Theme } from '@mui/material/styles';
import { useQuery } from '@tanstack/react-query';
import { useId, useState } from 'react';
import { MESSAGES, type Evidence, type MediaType } from '@portal/contracts';
import { fetchEvidenceCounts } from '../../api/admin';
import type { ListFilters } from '../../api/evidence';
import { FilterToggle, groupSx } from '../../evidence/FilterToggle';
import { LoadMore } from '../../evidence/LoadMore';
import { SearchBox } from '../../evidence/SearchBox';
import { EVIDENCE_KEY, useEvidenceList } from '../../evidence/queries';
import { EvidenceRows } from './EvidenceRows';
import { EvidenceViewerDialog } from './EvidenceViewerDialog';
import { SelectionBar, useRowSelection } from './SelectionBar';
import { LoadFailedAlert } from '../../components/LoadFailedAlert';

const ALL = { kind: 'admin' } as const;

/**
 * The review views as one bar; on a phone two by two (with their counts they do not fit one
 * row of 360 px), each segment whole rather than a bar broken across lines.
 */
const viewGroupSx: SxProps<Theme> = [
  groupSx,
  (theme) => ({
    [theme.breakpoints.down('sm')]: {
      display: 'grid',
      gridTemplateColumns: 'repeat(2, minmax(0, 1fr))',
      gap: 0.75,
      '& > button:nth-of-type(n)': { marginLeft: 0, borderColor: theme.palette.divider, borderRadius: `${theme.shape.borderRadius}px` },
    },
  }),
];

/** Which items the administration list shows: the review queue first. */
export type ReviewView = 'new' | 'public' | 'private' | 'all';

const VIEWS: { value: ReviewView; label: string; list: string; empty: string }[] = [
  { value: 'new', label: 'New', list: 'Review queue', empty: 'Nothing new to review.' },
  { value: 'public', label: 'Public', list: 'Public items', empty: 'No public evidence.' },
  { value: 'private', label: 'Private', list: 'Private items', empty: 'No private evidence.' },
  { value: 'all', label: 'All', list: 'All evidence', empty: 'No evidence yet.' },
];

const filtersOf = (view: ReviewView, q: string): ListFilters => ({
  q,
  ...(view === 'new' ? { review_status: 'new' as const } : {}),
  ...(view === 'public' || view === 'private' ? { visibility: view } : {}),
});

export const EVIDENCE_COUNTS_KEY = [...EVIDENCE_KEY, 'counts'] as const;

/**
 * All evidence for administrators, opening on the review queue (new items): counts, a search,
 * the media filter, and checkboxes to publish, unpublish or mark reviewed what was chosen.
 */
export default function AdminEvidenceList() {
  const [view, setView] = useState<ReviewView>('new');
  const [q, setQ] = useState('');
  const [type, setType] = useState<MediaType | null>(null);
  const [viewing, setViewing] = useState<Evidence | null>(null);
  const filters = filtersOf(view, q);
  const list = useEvidenceList(ALL, type, { filters });
  const counts = useQuery({ queryKey: EVIDENCE_COUNTS_KEY, queryFn: ({ signal }) => fetchEvidenceCounts(signal) });
  const selection = useRowSelection(list.items, `${view}|${q}|${type ?? 'all'}`);
  const current = viewing ? (list.items.find((item) => item.id === viewing.id) ?? viewing) : null;
  const described = VIEWS.find((entry) => entry.value === view)!;
  const filtered = q !== '' || type !== null;
  const groupLabel = useId();

  const countOf = (value: ReviewView): number | undefined => {
    const data = counts.data;
    if (!data) return undefined;
    return value === 'all' ? data.total : data[value];
  };

  let content;
  if (list.isPending) content = <Typography role="status">Loading...</Typography>;
  else if (list.isError && list.items.length === 0)
    content = <LoadFailedAlert onRetry={() => void list.refetch()}>{MESSAGES.evidenceLoadFailed}</LoadFailedAlert>;
  else if (list.items.length === 0)
    content = <Typography role="status">{filtered ? 'No evidence matches these filters.' : described.empty}</Typography>;
  else content = <EvidenceRows items={list.items} label={described.list} onOpen={setViewing} selection={selection.rows} />;

  return (
    <>
      <Box sx={{ mb: 2 }}>
        <Typography id={groupLabel} component="h3" variant="body2" sx={{ fontWeight: 600, mb: 0.5 }}>
          Show
        </Typography>
        <Box role="group" aria-labelledby={groupLabel} sx={viewGroupSx}>
          {VIEWS.map((entry) => {
            const count = countOf(entry.value);
            return (
              <ButtonBase key={entry.value} focusRipple aria-pressed={entry.value === view} onClick={() => setView(entry.value)}>
                {count === undefined ? entry.label : `${entry.label} (${count})`}
              </ButtonBase>
            );
          })}
        </Box>
      </Box>
      <SearchBox label="Search evidence" value={q} onSearch={setQ} placeholder="Words in titles and notes" />
      <FilterToggle value={type} onChange={setType} />
      {list.items.length > 0 ? <SelectionBar selection={selection} type={type} filters={filters} hasMore={list.hasNextPage} /> : null}
      {content}
      <LoadMore hasMore={list.hasNextPage} loading={list.isFetchingNextPage} onLoadMore={() => void list.fetchNextPage()} />
      {current ? <EvidenceViewerDialog key={current.id} item={current} onChanged={setViewing} onClose={() => setViewing(null)} /> : null}
    </>
  );
}
