import AudioFileIcon from '@mui/icons-material/AudioFile';
import Box from '@mui/material/Box';
import Typography from '@mui/material/Typography';
import { useObjectUrl } from '../../components/useObjectUrl';
import { DETAIL_MEDIA_MAX_HEIGHT } from '../../evidence/EvidenceMedia';

function kindOf(file: File): 'image' | 'video' | 'audio' | 'other' {
  if (file.type.startsWith('image/')) return 'image';
  if (file.type.startsWith('video/')) return 'video';
  if (file.type.startsWith('audio/')) return 'audio';
  return 'other';
}

function sizeOf(bytes: number): string {
  if (bytes >= 1024 * 1024) return `${(bytes / (1024 * 1024)).toFixed(1)} MB`;
  return `${Math.max(1, Math.round(bytes / 1024))} KB`;
}

/** The chosen or recorded media before it is sent, played from memory. */
export function MediaPreview({ file }: { file: File }) {
  const url = useObjectUrl(file);
  const kind = kindOf(file);
  const style = { display: 'block', maxWidth: '100%', maxHeight: DETAIL_MEDIA_MAX_HEIGHT, margin: '0 auto', borderRadius: 8 } as const;
  return (
    <Box component="figure" sx={{ m: 0, mb: 2 }}>
      {url && kind === 'image' ? <img src={url} alt="The chosen picture" style={style} /> : null}
      {url && kind === 'video' ? (
        <video
          src={url}
          controls
          playsInline
          preload="metadata"
          aria-label="The chosen video"
          style={{ ...style, width: '100%', background: '#000' }}
        />
      ) : null}
      {url && kind === 'audio' ? (
        <audio src={url} controls preload="metadata" aria-label="The recording" style={{ width: '100%' }} />
      ) : null}
      {kind === 'other' ? (
        <Box sx={{ display: 'flex', alignItems: 'center', gap: 1, p: 2, bgcolor: 'grey.100', borderRadius: 1 }}>
          <AudioFileIcon aria-hidden="true" />
          <Typography>No preview for this file; it is checked when it arrives.</Typography>
        </Box>
      ) : null}
      <Typography component="figcaption" variant="body2" color="text.secondary" sx={{ mt: 0.5, overflowWrap: 'anywhere' }}>
        {`${file.name} · ${sizeOf(file.size)}`}
      </Typography>
    </Box>
  );
}
