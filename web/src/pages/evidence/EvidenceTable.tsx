import Chip from '@mui/material/Chip';
import Link from '@mui/material/Link';
import Table from '@mui/material/Table';
import TableBody from '@mui/material/TableBody';
import TableCell from '@mui/material/TableCell';
import TableContainer from '@mui/material/TableContainer';
import TableHead from '@mui/material/TableHead';
import TableRow from '@mui/material/TableRow';
import type { Evidence } from '@portal/contracts';
import { formatPosted, kindName } from '../../evidence/format';

function statusOf(item: Evidence): string {
  if (item.media_type === 1) return '—';
  if (item.media_status === 'processing') return 'Processing…';
  if (item.media_status === 'failed') return `Failed${item.media_error ? `: ${item.media_error}` : ''}`;
  return 'Ready';
}

/** The table view of the own evidence (a chunk of its own, loaded when the tab is chosen). */
export default function EvidenceTable({ items, onOpen }: { items: readonly Evidence[]; onOpen: (id: string) => void }) {
  return (
    // On a phone the table scrolls sideways rather than squeezing the titles into a sliver.
    <TableContainer sx={{ maxWidth: '100%', overflowX: 'auto' }}>
      <Table size="small" aria-label="Your evidence" sx={{ minWidth: 600 }}>
        <TableHead>
          <TableRow>
            <TableCell>Title</TableCell>
            <TableCell>Kind</TableCell>
            <TableCell>Media</TableCell>
            <TableCell>Posted</TableCell>
            <TableCell>Public</TableCell>
          </TableRow>
        </TableHead>
        <TableBody>
          {items.map((item) => (
            <TableRow key={item.id} hover>
              <TableCell sx={{ minWidth: 160, maxWidth: 260, overflowWrap: 'break-word' }}>
                <Link component="button" type="button" onClick={() => onOpen(item.id)} sx={{ textAlign: 'left' }}>
                  {item.title}
                </Link>
              </TableCell>
              <TableCell>{kindName(item.media_type)}</TableCell>
              <TableCell>{statusOf(item)}</TableCell>
              <TableCell sx={{ whiteSpace: 'nowrap' }}>{formatPosted(item.date_posted)}</TableCell>
              <TableCell>{item.is_public ? <Chip label="Public" size="small" color="success" /> : 'No'}</TableCell>
            </TableRow>
          ))}
        </TableBody>
      </Table>
    </TableContainer>
  );
}
