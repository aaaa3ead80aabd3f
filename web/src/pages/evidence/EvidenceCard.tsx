import Box from '@mui/material/Box';
import Card from '@mui/material/Card';
import CardActionArea from '@mui/material/CardActionArea';
import Chip from '@mui/material/Chip';
import Typography from '@mui/material/Typography';
import type { Evidence } from '@portal/contracts';
import { EvidencePreview } from '../../evidence/EvidencePreview';
import { kindName, truncateTitle } from '../../evidence/format';
import { VisuallyHidden } from '../../components/VisuallyHidden';

/** Own cards: 170x230 with a 160x160 preview (SPEC section 9). */
export const CARD_WIDTH = 170;
export const CARD_HEIGHT = 230;
export const PREVIEW_SIZE = 160;

/**
 * One of the participant's items: preview, the title cut at 8 characters (or as much as tells it
 * apart from a card that would read alike: `shown`, from cardTitles), and 'Public' when it is.
 * The button is named by what it shows (no aria-label that would differ from the visible text):
 * the kind and the whole title are there for screen readers, the cut title for the eye.
 */
export function EvidenceCard({ item, shown = truncateTitle(item.title), onOpen }: { item: Evidence; shown?: string; onOpen: () => void }) {
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
        sx={{ height: '100%', display: 'flex', flexDirection: 'column', alignItems: 'center', justifyContent: 'flex-start', p: '4px' }}
      >
        <EvidencePreview item={item} width={PREVIEW_SIZE} height={PREVIEW_SIZE} errorLines={2} />
        <Box sx={{ width: '100%', px: 0.5, pt: 0.75, display: 'flex', flexDirection: 'column', alignItems: 'flex-start', gap: 0.5 }}>
          <Typography
            variant="body2"
            sx={{ fontWeight: 600, whiteSpace: 'nowrap', overflow: 'hidden', textOverflow: 'ellipsis', maxWidth: '100%' }}
          >
            <VisuallyHidden>{`${kindName(item.media_type)}: `}</VisuallyHidden>
            {shown === item.title ? (
              shown
            ) : (
              <>
                <span aria-hidden="true">{shown}</span>
                <VisuallyHidden>{item.title}</VisuallyHidden>
              </>
            )}
          </Typography>
          {item.is_public ? <Chip label="Public" size="small" color="success" sx={{ height: 22 }} /> : null}
        </Box>
      </CardActionArea>
    </Card>
  );
}
