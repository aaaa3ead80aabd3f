import PublicIcon from '@mui/icons-material/Public';
import PublicOffIcon from '@mui/icons-material/PublicOff';
import Button from '@mui/material/Button';
import Box from '@mui/material/Box';
import Typography from '@mui/material/Typography';
import { useQueryClient } from '@tanstack/react-query';
import { Suspense, lazy, useState } from 'react';
import { setAllVisibility } from '../../api/admin';
import { messageOf } from '../../api/http';
import { Page } from '../../components/Page';
import { ConfirmDialog } from '../../evidence/ConfirmDialog';
import { refreshEvidence } from '../../evidence/queries';
import { useNotify } from '../../notifications/notify-context';

const AdminEvidenceList = lazy(() => import('./AdminEvidenceList'));
const AdminUserList = lazy(() => import('./AdminUserList'));
const ActivityDialog = lazy(() => import('./ActivityDialog'));
const TodaySheet = lazy(() => import('./TodaySheet'));

const loading = <Typography role="status">Loading...</Typography>;

/**
 * The views of the administration page, one shown at a time; each is its own lazily loaded
 * module. A further view (e.g. an activity log) is one more entry here and one more button.
 */
export type AdminView = 'evidence' | 'users' | 'today';

const VIEW_HEADINGS: Record<AdminView, string> = { evidence: 'Evidence', users: 'Users', today: 'Today: the call sheet' };

/** /admin?view=today opens the call sheet at once (a performer's bookmark on their phone). */
function initialView(): AdminView {
  const asked = new URLSearchParams(window.location.search).get('view');
  return asked === 'users' || asked === 'today' ? asked : 'evidence';
}

function AdminViewContent({ view }: { view: AdminView }) {
  switch (view) {
    case 'users':
      return <AdminUserList />;
    case 'today':
      return <TodaySheet />;
    default:
      return <AdminEvidenceList />;
  }
}

/**
 * /admin (administrators): the evidence (opening on the review queue) or all users, and the
 * whole archive's visibility at once.
 */
export default function AdminPage() {
  const client = useQueryClient();
  const notify = useNotify();
  const [view, setView] = useState<AdminView>(initialView);
  const showUsers = view === 'users';
  const [bulk, setBulk] = useState<'public' | 'private' | null>(null);
  const [busy, setBusy] = useState(false);
  const [showActivity, setShowActivity] = useState(false);

  const applyBulk = async (makePublic: boolean) => {
    setBusy(true);
    try {
      const result = await setAllVisibility(makePublic);
      void refreshEvidence(client);
      notify({
        message: `All evidence is now ${result.is_public ? 'public' : 'private'} (${result.changed} ${result.changed === 1 ? 'item' : 'items'} changed).`,
        severity: 'success',
      });
    } catch (error) {
      console.warn('bulk visibility change failed', error);
      notify({ message: messageOf(error, 'The visibility could not be changed. Please try again.'), severity: 'error' });
    } finally {
      setBusy(false);
      setBulk(null);
    }
  };

  return (
    <Page title="Administration" maxWidth="md">
      {/* On a phone the two views share a row, so the queue starts higher up the screen. */}
      <Box
        sx={{
          display: { xs: 'grid', sm: 'flex' },
          gridTemplateColumns: 'repeat(2, minmax(0, 1fr))',
          gap: 1.5,
          mb: 3,
          '@media print': { display: 'none' },
        }}
      >
        {/* The bulk actions are outlined: the riskiest act on the page is not its loudest button. */}
        <Button variant="outlined" startIcon={<PublicIcon />} onClick={() => setBulk('public')} sx={{ gridColumn: 'span 2' }}>
          Make All Public
        </Button>
        <Button variant="outlined" startIcon={<PublicOffIcon />} onClick={() => setBulk('private')} sx={{ gridColumn: 'span 2' }}>
          Make All Private
        </Button>
        <Button variant="outlined" color="inherit" onClick={() => setView(showUsers ? 'evidence' : 'users')} aria-pressed={showUsers}>
          {showUsers ? 'Show Evidence' : 'Show Users'}
        </Button>
        <Button variant="outlined" color="secondary" onClick={() => setShowActivity(true)} aria-haspopup="dialog">
          Activity
        </Button>
        <Button
          variant={view === 'today' ? 'contained' : 'outlined'}
          onClick={() => setView(view === 'today' ? 'evidence' : 'today')}
          aria-pressed={view === 'today'}
          sx={{ gridColumn: 'span 2' }}
        >
          Today
        </Button>
      </Box>
      <Typography variant="h2" component="h2" gutterBottom>
        {VIEW_HEADINGS[view]}
      </Typography>
      <Suspense fallback={loading}>
        <AdminViewContent view={view} />
      </Suspense>
      {showActivity ? (
        <Suspense fallback={loading}>
          <ActivityDialog open onClose={() => setShowActivity(false)} />
        </Suspense>
      ) : null}
      <ConfirmDialog
        open={bulk !== null}
        title={bulk === 'private' ? 'Make All Evidence Private' : 'Make All Evidence Public'}
        busy={busy}
        onCancel={() => setBulk(null)}
        onConfirm={() => void applyBulk(bulk === 'public')}
      >
        {bulk === 'private'
          ? 'Are you sure you want to make all evidence private? Nothing will be shown in the public archive.'
          : 'Are you sure you want to make all evidence public? Every item will be shown in the public archive once its media is ready.'}
      </ConfirmDialog>
    </Page>
  );
}
