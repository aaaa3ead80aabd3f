import Box from '@mui/material/Box';
import Typography from '@mui/material/Typography';
import { Suspense, lazy, useState } from 'react';
import { MESSAGES, type MediaType } from '@portal/contracts';
import { Page } from '../../components/Page';
import { PageLoading } from '../../components/PageLoading';
import { FilterToggle } from '../../evidence/FilterToggle';
import { LoadMore } from '../../evidence/LoadMore';
import { SearchBox } from '../../evidence/SearchBox';
import { useEvidenceList } from '../../evidence/queries';
import { ArchiveCard, ARCHIVE_CARD_WIDTH } from './ArchiveCard';
import { LoadFailedAlert } from '../../components/LoadFailedAlert';

// The item dialog (MUI's Dialog, the media player) loads when a visitor first opens an item, and
// then stays mounted so that it can close with its transition.
const ArchiveDialog = lazy(() => import('./ArchiveDialog').then((module) => ({ default: module.ArchiveDialog })));

const PUBLIC = { kind: 'public' } as const;

/** /archive: the declassified evidence, open to everyone; more loads as the visitor scrolls. */
export default function ArchivePage() {
  const [type, setType] = useState<MediaType | null>(null);
  const [q, setQ] = useState('');
  const [openId, setOpenId] = useState<string | null>(null);
  const [dialogUsed, setDialogUsed] = useState(false);
  const list = useEvidenceList(PUBLIC, type, { filters: { q } });
  const opened = list.items.find((item) => item.id === openId) ?? null;

  let content;
  if (list.isPending) {
    content = <PageLoading label="Loading the archive…" />;
  } else if (list.isError && list.items.length === 0) {
    content = <LoadFailedAlert onRetry={() => void list.refetch()}>{MESSAGES.evidenceLoadFailed}</LoadFailedAlert>;
  } else if (list.items.length === 0) {
    content = (
      <Typography variant="h2" component="p" role="status" sx={{ textAlign: 'center', py: 6 }}>
        {q ? `Nothing in the archive matches “${q}”.` : MESSAGES.archiveEmpty}
      </Typography>
    );
  } else {
    content = (
      <Box
        component="ul"
        aria-label="Public evidence"
        sx={{
          display: 'grid',
          gridTemplateColumns: `repeat(auto-fill, ${ARCHIVE_CARD_WIDTH}px)`,
          gap: 2,
          justifyContent: 'center',
          p: 0,
          m: 0,
        }}
      >
        {list.items.map((item) => (
          <ArchiveCard
            key={item.id}
            item={item}
            onOpen={() => {
              setDialogUsed(true);
              setOpenId(item.id);
            }}
          />
        ))}
      </Box>
    );
  }

  return (
    <Page title="Archive" maxWidth="lg">
      <SearchBox label="Search the archive" value={q} onSearch={setQ} placeholder="Words in titles and notes" />
      <FilterToggle value={type} onChange={setType} />
      {content}
      <LoadMore hasMore={list.hasNextPage} loading={list.isFetchingNextPage} onLoadMore={() => void list.fetchNextPage()} />
      {dialogUsed ? (
        <Suspense fallback={null}>
          <ArchiveDialog item={opened} onClose={() => setOpenId(null)} />
        </Suspense>
      ) : null}
    </Page>
  );
}
