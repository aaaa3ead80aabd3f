import Alert from '@mui/material/Alert';
import AlertTitle from '@mui/material/AlertTitle';
import Box from '@mui/material/Box';
import CircularProgress from '@mui/material/CircularProgress';
import Typography from '@mui/material/Typography';
import type { Evidence } from '@portal/contracts';
import { placeholderUrl } from './format';

/** Detail media: at most 500 px high (SPEC section 9). */
export const DETAIL_MEDIA_MAX_HEIGHT = 500;

/**
 * The display media of one item, for a dialog: the picture, the video with its poster frame, or
 * the sound with a player. Only here is the display media loaded (the grids show thumbnails).
 */
export function EvidenceMedia({ item }: { item: Evidence }) {
  if (item.media_type === 1) return null;
  if (item.media_status === 'processing') {
    return (
      <Box role="status" sx={{ display: 'flex', alignItems: 'center', gap: 1.5, py: 2 }}>
        <CircularProgress size={24} aria-hidden="true" />
        <Typography>Processing… The media will show here once it is ready.</Typography>
      </Box>
    );
  }
  if (item.media_status === 'failed' || !item.aws_url) {
    return (
      <Alert severity="error" sx={{ my: 1 }}>
        <AlertTitle>Processing failed</AlertTitle>
        {item.media_error ?? 'The media could not be processed.'}
      </Alert>
    );
  }
  // '8px', not 8: in sx a number is a multiple of the theme's radius (80 px, which cropped photos).
  const mediaStyle = {
    display: 'block',
    maxWidth: '100%',
    maxHeight: DETAIL_MEDIA_MAX_HEIGHT,
    margin: '0 auto',
    borderRadius: '8px',
  } as const;
  if (item.media_type === 3) {
    return (
      <video
        src={item.aws_url}
        poster={item.poster_url ?? undefined}
        controls
        playsInline
        preload="metadata"
        aria-label={`Video: ${item.title}`}
        style={{ ...mediaStyle, width: '100%', background: '#000' }}
      />
    );
  }
  if (item.media_type === 4) {
    return (
      <audio
        src={item.aws_url}
        controls
        preload="metadata"
        aria-label={`Audio: ${item.title}`}
        style={{ display: 'block', width: '100%' }}
      />
    );
  }
  const placeholder = placeholderUrl(item.placeholder);
  const ratio = item.width && item.height ? `${item.width} / ${item.height}` : undefined;
  return (
    <Box
      component="img"
      src={item.aws_url}
      alt={item.title}
      width={item.width ?? undefined}
      height={item.height ?? undefined}
      decoding="async"
      sx={{ ...mediaStyle, width: 'auto', height: 'auto', backgroundSize: 'cover' }}
      // The item's own shape and placeholder inline, not as a class per item (see EvidencePreview).
      style={{ aspectRatio: ratio, backgroundImage: placeholder ? `url("${placeholder}")` : undefined }}
    />
  );
}
