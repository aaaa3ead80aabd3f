import Box from '@mui/material/Box';
import Card from '@mui/material/Card';
import CardActionArea from '@mui/material/CardActionArea';
import Chip from '@mui/material/Chip';
import Typography from '@mui/material/Typography';
import type { Evidence } from '@portal/contracts';
import { EvidencePreview } from '../../evidence/EvidencePreview';
import { kindName, truncateTitle } from '../../evidence/format';

/** Own cards: 170x230 with a 160x160 preview (SPEC section 9). */
export const CARD_WIDTH = 170;
export const CARD_HEIGHT = 230;
export const PREVIEW_SIZE = 160;

/** One of the participant's items: preview, the title cut at 8 characters, and 'Public' when it is. */
export function EvidenceCard({ item, onOpen }: { item: Evidence; onOpen: () => void }) {
  const status = item.media_type === 1 ? '' : item.media_status === 'processing' ? ', processing' : item.media_status === 'failed' ? ', processing failed' : '';
  return (
    <Card
      variant="outlined"
      component="li"
      data-evidence-id={item.id}
      data-media-status={item.media_status}
      sx={{ width: CARD_WIDTH, height: CARD_HEIGHT, listStyle: 'none' }}
    >
      <CardActionArea
        onClick={onOpen}
        aria-label={`${kindName(item.media_type)}: ${item.title}${item.is_public ? ', public' : ''}${status}`}
        sx={{ height: '100%', display: 'flex', flexDirection: 'column', alignItems: 'center', justifyContent: 'flex-start', p: '4px' }}
      >
        <EvidencePreview item={item} width={PREVIEW_SIZE} height={PREVIEW_SIZE} errorLines={2} />
        <Box sx={{ width: '100%', px: 0.5, pt: 0.75, display: 'flex', flexDirection: 'column', alignItems: 'flex-start', gap: 0.5 }}>
          <Typography variant="body2" sx={{ fontWeight: 600, whiteSpace: 'nowrap', overflow: 'hidden', maxWidth: '100%' }}>
            {truncateTitle(item.title)}
          </Typography>
          {item.is_public ? <Chip label="Public" size="small" color="success" sx={{ height: 22 }} /> : null}
        </Box>
      </CardActionArea>
    </Card>
  );
}
