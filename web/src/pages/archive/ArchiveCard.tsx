import Box from '@mui/material/Box';
import Card from '@mui/material/Card';
import CardActionArea from '@mui/material/CardActionArea';
import Typography from '@mui/material/Typography';
import type { Evidence } from '@portal/contracts';
import { EvidencePreview } from '../../evidence/EvidencePreview';
import { kindName } from '../../evidence/format';
import { VisuallyHidden } from '../../components/VisuallyHidden';

/** Archive cards: 250x357 px, the notes clamped to 6 lines (SPEC section 9). */
export const ARCHIVE_CARD_WIDTH = 250;
export const ARCHIVE_CARD_HEIGHT = 357;
export const ARCHIVE_NOTES_LINES = 6;
const MEDIA_HEIGHT = 170;

/** A public item in the archive grid: its thumbnail (never the display media), title and notes. */
export function ArchiveCard({ item, onOpen }: { item: Evidence; onOpen: () => void }) {
  return (
    <Card
      variant="outlined"
      component="li"
      data-evidence-id={item.id}
      sx={{ width: ARCHIVE_CARD_WIDTH, height: ARCHIVE_CARD_HEIGHT, listStyle: 'none' }}
    >
      <CardActionArea
        onClick={onOpen}
        sx={{ height: '100%', display: 'flex', flexDirection: 'column', alignItems: 'stretch', justifyContent: 'flex-start' }}
      >
        <EvidencePreview item={item} width="100%" height={MEDIA_HEIGHT} />
        <Box sx={{ p: 1.5, pt: 1, overflow: 'hidden' }}>
          <Typography
            component="span"
            sx={{ display: 'block', fontWeight: 600, fontSize: '1rem', whiteSpace: 'nowrap', overflow: 'hidden', textOverflow: 'ellipsis' }}
          >
            <VisuallyHidden>{`${kindName(item.media_type)}: `}</VisuallyHidden>
            {item.title}
          </Typography>
          {item.notes ? (
            <Typography
              variant="body2"
              color="text.secondary"
              sx={{
                display: '-webkit-box',
                WebkitLineClamp: ARCHIVE_NOTES_LINES,
                WebkitBoxOrient: 'vertical',
                overflow: 'hidden',
                overflowWrap: 'anywhere',
                whiteSpace: 'pre-line',
              }}
            >
              {item.notes}
            </Typography>
          ) : null}
        </Box>
      </CardActionArea>
    </Card>
  );
}
