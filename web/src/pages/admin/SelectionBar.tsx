import Box from '@mui/material/Box';
import Button from '@mui/material/Button';
import Checkbox from '@mui/material/Checkbox';
import DownloadIcon from '@mui/icons-material/Download';
import FormControlLabel from '@mui/material/FormControlLabel';
import Stack from '@mui/material/Stack';
import Typography from '@mui/material/Typography';
import { useQueryClient } from '@tanstack/react-query';
import { useState } from 'react';
import { EXPORT_MAX_IDS, type Evidence, type MediaType } from '@portal/contracts';
import { evidenceExportUrl, fetchMatchingIds, markReviewed, setSelectedVisibility } from '../../api/admin';
import type { ListFilters } from '../../api/evidence';
import { messageOf } from '../../api/http';
import { ConfirmDialog } from '../../evidence/ConfirmDialog';
import { refreshEvidence } from '../../evidence/queries';
import { useNotify } from '../../notifications/notify-context';
import type { RowSelection } from './EvidenceRows';

export interface Selection {
  /** Ticked ids among the rows loaded so far. */
  ids: ReadonlySet<string>;
  /** Everything the filters match, loaded or not. */
  allMatching: boolean;
  rows: RowSelection;
  items: readonly Evidence[];
  selectShown: (on: boolean) => void;
  selectAllMatching: () => void;
  clear: () => void;
}

/**
 * Which rows are ticked. A tick with Shift held ticks (or unticks) every row from the last one
 * ticked; "everything matching" stands for all the filters match, also rows not loaded yet.
 * The selection is forgotten when the filters (`scope`) change.
 */
export function useRowSelection(items: readonly Evidence[], scope: string): Selection {
  const [state, setState] = useState({ scope, ids: new Set<string>(), allMatching: false, anchor: null as number | null });
  const current = state.scope === scope ? state : { scope, ids: new Set<string>(), allMatching: false, anchor: null };
  if (current !== state) setState(current);

  const rows: RowSelection = {
    isSelected: (id) => current.allMatching || current.ids.has(id),
    onToggle: (item, index, range) => {
      const ids = current.allMatching ? new Set(items.map((entry) => entry.id)) : new Set(current.ids);
      const on = !(current.allMatching || current.ids.has(item.id));
      const from = range && current.anchor !== null ? Math.min(current.anchor, index) : index;
      const to = range && current.anchor !== null ? Math.max(current.anchor, index) : index;
      for (const entry of items.slice(from, to + 1)) {
        if (on) ids.add(entry.id);
        else ids.delete(entry.id);
      }
      setState({ scope, ids, allMatching: false, anchor: index });
    },
  };
  return {
    ids: current.ids,
    allMatching: current.allMatching,
    rows,
    items,
    selectShown: (on) => setState({ scope, ids: on ? new Set(items.map((item) => item.id)) : new Set(), allMatching: false, anchor: null }),
    selectAllMatching: () => setState({ scope, ids: new Set(items.map((item) => item.id)), allMatching: true, anchor: null }),
    clear: () => setState({ scope, ids: new Set(), allMatching: false, anchor: null }),
  };
}

type Action = 'publish' | 'unpublish' | 'review';

const plural = (count: number) => `${count} ${count === 1 ? 'item' : 'items'}`;

/** Select all shown, everything matching, and what to do with the chosen items. */
export function SelectionBar({
  selection,
  type,
  filters,
  hasMore,
}: {
  selection: Selection;
  type: MediaType | null;
  filters: ListFilters;
  hasMore: boolean;
}) {
  const client = useQueryClient();
  const notify = useNotify();
  const [confirm, setConfirm] = useState<Action | null>(null);
  const [busy, setBusy] = useState(false);
  const shown = selection.items.length;
  const ticked = selection.allMatching ? shown : selection.items.filter((item) => selection.ids.has(item.id)).length;
  const count = selection.allMatching ? null : selection.ids.size;
  const chosen = selection.allMatching || selection.ids.size > 0;
  const what = count === null ? 'every item matching these filters' : plural(count);
  const [originals, setOriginals] = useState(false);
  const exportUrl = chosen ? evidenceExportUrl(selection.allMatching ? { type, filters } : { ids: [...selection.ids] }, originals) : null;

  const run = async (action: Action) => {
    setBusy(true);
    try {
      const ids = selection.allMatching ? await fetchMatchingIds(type, filters) : [...selection.ids];
      let message: string;
      let missing: number;
      if (action === 'review') {
        const result = await markReviewed(ids);
        message = `${plural(result.reviewed.length)} marked reviewed.`;
        missing = result.not_found.length;
      } else {
        const result = await setSelectedVisibility(ids, action === 'publish');
        message = `${plural(result.changed.length)} made ${action === 'publish' ? 'public' : 'private'}.`;
        missing = result.not_found.length;
      }
      if (missing > 0) message += ` ${plural(missing)} had been deleted meanwhile.`;
      notify({ message, severity: 'success' });
      selection.clear();
      void refreshEvidence(client);
    } catch (error) {
      console.warn('selected items could not be changed', error);
      notify({ message: messageOf(error, 'The chosen items could not be changed. Please try again.'), severity: 'error' });
    } finally {
      setBusy(false);
      setConfirm(null);
    }
  };

  return (
    <Box component="section" aria-label="Selected evidence" sx={{ mb: 1, py: 1, borderBottom: 1, borderColor: 'divider' }}>
      <Stack direction="row" sx={{ flexWrap: 'wrap', alignItems: 'center', columnGap: 2, rowGap: 1 }}>
        <FormControlLabel
          sx={{ mr: 0 }}
          control={
            <Checkbox
              checked={shown > 0 && ticked === shown}
              indeterminate={ticked > 0 && ticked < shown}
              onChange={(event) => selection.selectShown(event.target.checked)}
            />
          }
          label="Select all shown"
        />
        {hasMore && !selection.allMatching ? (
          <Button size="small" onClick={selection.selectAllMatching}>
            Select everything matching
          </Button>
        ) : null}
        <Typography role="status" variant="body2" color="text.secondary">
          {chosen ? `Selected: ${what}` : 'Nothing selected'}
        </Typography>
      </Stack>
      <Stack direction="row" sx={{ flexWrap: 'wrap', gap: 1, mt: 1 }}>
        <Button variant="outlined" size="small" disabled={!chosen || busy} onClick={() => setConfirm('publish')}>
          Publish selected
        </Button>
        <Button variant="outlined" size="small" disabled={!chosen || busy} onClick={() => setConfirm('unpublish')}>
          Make selected private
        </Button>
        <Button variant="outlined" size="small" disabled={!chosen || busy} onClick={() => void run('review')}>
          Mark reviewed
        </Button>
        {/* The investigator's zip (files and a manifest), downloaded by the browser as it is made. */}
        <Button
          variant="outlined"
          size="small"
          startIcon={<DownloadIcon />}
          {...(exportUrl ? { component: 'a' as const, href: exportUrl, download: true } : { disabled: true })}
        >
          Export selected (zip)
        </Button>
        <FormControlLabel
          sx={{ mr: 0 }}
          control={<Checkbox size="small" checked={originals} onChange={(event) => setOriginals(event.target.checked)} />}
          label="With original files"
        />
      </Stack>
      {chosen && !exportUrl ? (
        <Typography variant="body2" color="text.secondary" sx={{ mt: 1 }}>
          Export at most {EXPORT_MAX_IDS} items ticked one by one, or choose everything matching the filters.
        </Typography>
      ) : null}
      <ConfirmDialog
        open={confirm === 'publish' || confirm === 'unpublish'}
        title={confirm === 'publish' ? 'Publish Selected Evidence' : 'Make Selected Evidence Private'}
        busy={busy}
        onCancel={() => setConfirm(null)}
        onConfirm={() => void run(confirm!)}
      >
        {confirm === 'publish'
          ? `Make ${what} public? Each will be shown in the public archive once its media is ready.`
          : `Make ${what} private? They will no longer be shown in the public archive.`}
      </ConfirmDialog>
    </Box>
  );
}
