import Alert from '@mui/material/Alert';
import Button from '@mui/material/Button';
import Dialog from '@mui/material/Dialog';
import DialogActions from '@mui/material/DialogActions';
import DialogContent from '@mui/material/DialogContent';
import DialogTitle from '@mui/material/DialogTitle';
import Typography from '@mui/material/Typography';
import useMediaQuery from '@mui/material/useMediaQuery';
import { useTheme } from '@mui/material/styles';
import { useId, useMemo, useState } from 'react';
import { MESSAGES, type Evidence, type User } from '@portal/contracts';
import { LoadMore } from '../../evidence/LoadMore';
import { useEvidenceList } from '../../evidence/queries';
import { EvidenceRows } from './EvidenceRows';
import { EvidenceViewerDialog } from './EvidenceViewerDialog';

/** One participant's evidence (or 'User has not uploaded any evidence'); an item opens in the viewer. */
export function UserEvidenceDialog({ user, onClose }: { user: User; onClose: () => void }) {
  const theme = useTheme();
  const fullScreen = useMediaQuery(theme.breakpoints.down('sm'));
  const titleId = useId();
  const scope = useMemo(() => ({ kind: 'user', userId: user.id }) as const, [user.id]);
  const list = useEvidenceList(scope, null);
  const [viewing, setViewing] = useState<Evidence | null>(null);
  const current = viewing ? (list.items.find((item) => item.id === viewing.id) ?? viewing) : null;

  let content;
  if (list.isPending) content = <Typography role="status">Loading...</Typography>;
  else if (list.isError && list.items.length === 0) content = <Alert severity="error">{MESSAGES.evidenceLoadFailed}</Alert>;
  else if (list.items.length === 0) content = <Typography>{MESSAGES.noEvidenceForUser}</Typography>;
  else content = <EvidenceRows items={list.items} label={`Evidence of ${user.username}`} onOpen={setViewing} />;

  return (
    <>
      <Dialog open={current === null} onClose={onClose} fullScreen={fullScreen} fullWidth maxWidth="md" aria-labelledby={titleId}>
        <DialogTitle id={titleId} sx={{ overflowWrap: 'anywhere' }}>{`Evidence of ${user.username}`}</DialogTitle>
        <DialogContent>
          {content}
          <LoadMore hasMore={list.hasNextPage} loading={list.isFetchingNextPage} onLoadMore={() => void list.fetchNextPage()} />
        </DialogContent>
        <DialogActions>
          <Button onClick={onClose}>Close</Button>
        </DialogActions>
      </Dialog>
      {current ? <EvidenceViewerDialog key={current.id} item={current} onChanged={setViewing} onClose={() => setViewing(null)} /> : null}
    </>
  );
}
