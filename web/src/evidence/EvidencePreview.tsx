import ErrorOutlineIcon from '@mui/icons-material/ErrorOutline';
import GraphicEqIcon from '@mui/icons-material/GraphicEq';
import NotesIcon from '@mui/icons-material/Notes';
import PlayCircleOutlineIcon from '@mui/icons-material/PlayCircleOutline';
import Box from '@mui/material/Box';
import CircularProgress from '@mui/material/CircularProgress';
import Typography from '@mui/material/Typography';
import type { Evidence } from '@portal/contracts';
import { formatDuration, placeholderUrl, previewPictureOf } from './format';

interface EvidencePreviewProps {
  item: Evidence;
  width: number | string;
  height: number;
  /** Lines of the failure reason to show (the card is small). */
  errorLines?: number;
}

const centered = {
  display: 'flex',
  flexDirection: 'column',
  alignItems: 'center',
  justifyContent: 'center',
  gap: 0.5,
  textAlign: 'center',
  p: 1,
} as const;

/**
 * The small picture of an item in a grid: the thumbnail (or a video's poster frame) over its
 * ThumbHash placeholder, loaded lazily; an icon for notes and sound; and a clear state while the
 * media is processed or when it failed.
 */
export function EvidencePreview({ item, width, height, errorLines = 3 }: EvidencePreviewProps) {
  // Too small for words: icons only.
  const compact = height < 100;
  const frame = { width, height, borderRadius: 1, overflow: 'hidden', position: 'relative', bgcolor: 'grey.200', flexShrink: 0 } as const;

  if (item.media_type === 1) {
    return (
      <Box sx={{ ...frame, ...centered, bgcolor: '#efe9dc', color: '#5b4a2a' }}>
        <NotesIcon sx={{ fontSize: compact ? 32 : 56 }} aria-hidden="true" />
        {compact ? null : <Typography variant="caption">Note</Typography>}
      </Box>
    );
  }
  if (item.media_status === 'processing') {
    const still = previewPictureOf(item);
    const placeholder = placeholderUrl(item.placeholder);
    return (
      <Box
        sx={{ ...frame, ...centered, backgroundSize: 'cover', backgroundPosition: 'center' }}
        style={placeholder ? { backgroundImage: `url("${placeholder}")` } : undefined}
        role="status"
        aria-label={compact ? 'Processing…' : undefined}
      >
        {still ? (
          <Box
            component="img"
            src={still}
            alt=""
            loading="lazy"
            decoding="async"
            sx={{ position: 'absolute', inset: 0, width: '100%', height: '100%', objectFit: 'cover', display: 'block' }}
          />
        ) : null}
        <Box
          sx={{
            position: 'relative',
            display: 'flex',
            flexDirection: 'column',
            alignItems: 'center',
            gap: 0.5,
            ...(still ? { bgcolor: 'rgba(255,255,255,0.85)', borderRadius: 1, px: 1, py: 0.5 } : null),
          }}
        >
          <CircularProgress size={compact ? 24 : 32} aria-hidden="true" />
          {compact ? null : <Typography variant="body2">Processing…</Typography>}
        </Box>
      </Box>
    );
  }
  if (item.media_status === 'failed') {
    return (
      <Box sx={{ ...frame, ...centered, bgcolor: '#fdecea', color: '#8c1d18' }} title={item.media_error ?? undefined}>
        <ErrorOutlineIcon aria-hidden="true" />
        <Typography variant={compact ? 'caption' : 'body2'} sx={{ fontWeight: 600, lineHeight: 1.2 }}>
          {compact ? 'Failed' : 'Processing failed'}
        </Typography>
        {item.media_error && !compact ? (
          <Typography
            variant="caption"
            sx={{
              display: '-webkit-box',
              WebkitLineClamp: errorLines,
              WebkitBoxOrient: 'vertical',
              overflow: 'hidden',
              overflowWrap: 'anywhere',
            }}
          >
            {item.media_error}
          </Typography>
        ) : null}
      </Box>
    );
  }
  if (item.media_type === 4) {
    return (
      <Box sx={{ ...frame, ...centered, bgcolor: '#e3ebf5', color: 'primary.main' }}>
        <GraphicEqIcon sx={{ fontSize: compact ? 32 : 56 }} aria-hidden="true" />
        {compact ? null : <Typography variant="caption">Audio{item.duration ? ` · ${formatDuration(item.duration)}` : ''}</Typography>}
      </Box>
    );
  }
  const picture = previewPictureOf(item);
  const placeholder = placeholderUrl(item.placeholder);
  return (
    <Box
      sx={{ ...frame, backgroundSize: 'cover', backgroundPosition: 'center' }}
      // Each item's own picture as an inline style: in sx it would make a class per item, its
      // data URL compiled by emotion on the main thread for every card.
      style={placeholder ? { backgroundImage: `url("${placeholder}")` } : undefined}
    >
      {picture ? (
        <Box
          component="img"
          src={picture}
          alt=""
          loading="lazy"
          decoding="async"
          sx={{ width: '100%', height: '100%', objectFit: 'cover', display: 'block' }}
        />
      ) : null}
      {item.media_type === 3 ? (
        <Box
          sx={{ position: 'absolute', inset: 0, display: 'flex', alignItems: 'center', justifyContent: 'center', pointerEvents: 'none' }}
        >
          <PlayCircleOutlineIcon
            sx={{ fontSize: compact ? 28 : 48, color: 'white', filter: 'drop-shadow(0 0 3px rgba(0,0,0,0.7))' }}
            aria-hidden="true"
          />
        </Box>
      ) : null}
    </Box>
  );
}
