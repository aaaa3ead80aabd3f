import Alert from '@mui/material/Alert';
import Box from '@mui/material/Box';
import Tab from '@mui/material/Tab';
import Tabs from '@mui/material/Tabs';
import Typography from '@mui/material/Typography';
import { useQueryClient } from '@tanstack/react-query';
import { Suspense, lazy, useEffect, useMemo, useState } from 'react';
import { MESSAGES, type MediaType } from '@portal/contracts';
import { deleteEvidence } from '../../api/evidence';
import { Page } from '../../components/Page';
import { PageLoading } from '../../components/PageLoading';
import { ConfirmDialog } from '../../evidence/ConfirmDialog';
import { cardTitles } from '../../evidence/format';
import { FilterToggle } from '../../evidence/FilterToggle';
import { LoadMore } from '../../evidence/LoadMore';
import { refreshEvidence, removeCachedItem, useEvidenceList } from '../../evidence/queries';
import { useNotify } from '../../notifications/notify-context';
import { AddEvidenceButton } from './AddEvidenceButton';
import { EvidenceCard } from './EvidenceCard';
import { EvidenceDetailDialog } from './EvidenceDetailDialog';
import { LoadFailedAlert } from '../../components/LoadFailedAlert';
import { useCurrentUser } from '../../auth/useCurrentUser';
import { OutboxList } from '../../outbox/OutboxList';
import { flushOutbox } from '../../outbox/runner';
import { useOutbox } from '../../outbox/useOutbox';

/** The table view and the edit form load only when asked for. */
const EvidenceTable = lazy(() => import('./EvidenceTable'));
const EvidenceEditDialog = lazy(() => import('./EvidenceEditDialog'));

const OWN = { kind: 'own' } as const;

function Welcome() {
  return (
    <Box sx={{ maxWidth: 640 }}>
      <Typography variant="h2" component="h2" gutterBottom>
        Welcome, informant
      </Typography>
      <Typography sx={{ mb: 1.5 }}>
        You have not added any evidence yet. Everything you add here is available to the investigator.
      </Typography>
      <Typography component="h3" sx={{ fontWeight: 600 }}>
        How to upload evidence
      </Typography>
      <Box component="ol" sx={{ pl: 3, mt: 0.5, '& li': { mb: 0.5 } }}>
        <li>Press the red plus button at the bottom right of the screen.</li>
        <li>
          Choose <strong>Camera</strong> to take a picture, record a video or upload one from your phone; <strong>Audio</strong> to record
          sound or upload a recording; or <strong>Notes</strong> to write down what you saw.
        </li>
        <li>Give it a title and notes, then press Upload Evidence. Keep the screen open until the upload is done.</li>
      </Box>
    </Box>
  );
}

/** /Evidence and /evidence: the participant's own evidence, a filter, and the red plus button to add more. */
export default function EvidencePage() {
  const client = useQueryClient();
  const notify = useNotify();
  const [type, setType] = useState<MediaType | null>(null);
  const [tab, setTab] = useState<'evidence' | 'table'>('evidence');
  const [openId, setOpenId] = useState<string | null>(null);
  const [editing, setEditing] = useState(false);
  const [confirmDelete, setConfirmDelete] = useState(false);
  const [deleting, setDeleting] = useState(false);
  const list = useEvidenceList(OWN, type);
  const { user } = useCurrentUser();
  const outbox = useOutbox(user?.id ?? null);
  // What waits in the outbox goes on here (e.g. an upload left on the details page).
  useEffect(() => {
    if (user && navigator.onLine !== false) void flushOutbox(user.id);
  }, [user]);
  const opened = list.items.find((item) => item.id === openId) ?? null;
  const shownTitles = useMemo(() => cardTitles(list.items.map((item) => item.title)), [list.items]);

  const remove = async () => {
    if (!opened) return;
    setDeleting(true);
    try {
      await deleteEvidence(opened.id);
      removeCachedItem(client, opened.id);
      void refreshEvidence(client);
      setConfirmDelete(false);
      setOpenId(null);
      notify({ message: MESSAGES.evidenceDeleted, severity: 'success' });
    } catch (error) {
      console.warn('evidence delete failed', error);
      setConfirmDelete(false);
      notify({ message: MESSAGES.evidenceDeleteFailed, severity: 'error' });
    } finally {
      setDeleting(false);
    }
  };

  let content;
  if (list.isPending) {
    content = <PageLoading label="Loading evidence…" />;
  } else if (list.isError && list.items.length === 0) {
    content = <LoadFailedAlert onRetry={() => void list.refetch()}>{MESSAGES.evidenceLoadFailed}</LoadFailedAlert>;
  } else if (list.items.length === 0) {
    content =
      type === null ? (
        outbox.some((entry) => entry.state !== 'done') ? null : (
          <Welcome />
        )
      ) : (
        <Typography>No evidence of this kind yet.</Typography>
      );
  } else if (tab === 'table') {
    content = (
      <Suspense fallback={<PageLoading />}>
        <EvidenceTable items={list.items} onOpen={setOpenId} />
      </Suspense>
    );
  } else {
    content = (
      <Box
        component="ul"
        aria-label="Your evidence"
        // Two 170 px cards side by side from 360 px wide screens up (the page's side margins are borrowed).
        sx={{
          display: 'grid',
          gridTemplateColumns: 'repeat(auto-fill, 170px)',
          gap: { xs: 1, sm: 1.5 },
          justifyContent: 'center',
          p: 0,
          my: 0,
          mx: { xs: -1.5, sm: 0 },
        }}
      >
        {list.items.map((item, index) => (
          <EvidenceCard key={item.id} item={item} shown={shownTitles[index]} onOpen={() => setOpenId(item.id)} />
        ))}
      </Box>
    );
  }

  return (
    <Page title="Evidence" maxWidth="lg">
      <Box sx={{ pb: 12 }}>
        <Tabs value={tab} onChange={(_event, next: 'evidence' | 'table') => setTab(next)} aria-label="View" sx={{ mb: 2 }}>
          <Tab value="evidence" label="Evidence" />
          <Tab value="table" label="Table" />
        </Tabs>
        {user ? <OutboxList entries={outbox} userId={user.id} /> : null}
        <FilterToggle value={type} onChange={setType} />
        {list.isError && list.items.length > 0 ? (
          <Alert severity="error" sx={{ mb: 2 }}>
            {MESSAGES.evidenceLoadFailed}
          </Alert>
        ) : null}
        {content}
        <LoadMore hasMore={list.hasNextPage} loading={list.isFetchingNextPage} onLoadMore={() => void list.fetchNextPage()} />
      </Box>
      <AddEvidenceButton />
      <EvidenceDetailDialog
        item={editing || confirmDelete ? null : opened}
        onClose={() => setOpenId(null)}
        onEdit={() => setEditing(true)}
        onDelete={() => setConfirmDelete(true)}
      />
      {editing && opened ? (
        <Suspense fallback={null}>
          <EvidenceEditDialog item={opened} onClose={() => setEditing(false)} />
        </Suspense>
      ) : null}
      <ConfirmDialog
        open={confirmDelete && opened !== null}
        title="Confirm Delete"
        danger
        busy={deleting}
        onCancel={() => setConfirmDelete(false)}
        onConfirm={() => void remove()}
      >
        Are you sure you want to delete this evidence?
      </ConfirmDialog>
    </Page>
  );
}
