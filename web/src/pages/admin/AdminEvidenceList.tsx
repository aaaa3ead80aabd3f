import Typography from '@mui/material/Typography';
import { useState } from 'react';
import { MESSAGES, type Evidence, type MediaType } from '@portal/contracts';
import { FilterToggle } from '../../evidence/FilterToggle';
import { LoadMore } from '../../evidence/LoadMore';
import { useEvidenceList } from '../../evidence/queries';
import { EvidenceRows } from './EvidenceRows';
import { EvidenceViewerDialog } from './EvidenceViewerDialog';
import { LoadFailedAlert } from '../../components/LoadFailedAlert';

const ALL = { kind: 'admin' } as const;

/** All evidence, newest first, for administrators (loaded when the administration page shows evidence). */
export default function AdminEvidenceList() {
  const [type, setType] = useState<MediaType | null>(null);
  const [viewing, setViewing] = useState<Evidence | null>(null);
  const list = useEvidenceList(ALL, type);
  const current = viewing ? (list.items.find((item) => item.id === viewing.id) ?? viewing) : null;

  let content;
  if (list.isPending) content = <Typography role="status">Loading...</Typography>;
  else if (list.isError && list.items.length === 0)
    content = <LoadFailedAlert onRetry={() => void list.refetch()}>{MESSAGES.evidenceLoadFailed}</LoadFailedAlert>;
  else if (list.items.length === 0) content = <Typography>No evidence yet.</Typography>;
  else content = <EvidenceRows items={list.items} label="All evidence" onOpen={setViewing} />;

  return (
    <>
      <FilterToggle value={type} onChange={setType} />
      {content}
      <LoadMore hasMore={list.hasNextPage} loading={list.isFetchingNextPage} onLoadMore={() => void list.fetchNextPage()} />
      {current ? <EvidenceViewerDialog key={current.id} item={current} onChanged={setViewing} onClose={() => setViewing(null)} /> : null}
    </>
  );
}
