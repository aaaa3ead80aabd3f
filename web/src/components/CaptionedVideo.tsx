import Box from '@mui/material/Box';
import { useCallback, useEffect, useState, type ComponentProps, type Ref } from 'react';

interface CaptionedVideoProps extends Omit<ComponentProps<'video'>, 'src' | 'children' | 'ref'> {
  src: string;
  captionsUrl: string | null;
  /** What the video is about, for screen readers. */
  label: string;
  ref?: Ref<HTMLVideoElement>;
}

function isCrossOrigin(url: string): boolean {
  try {
    return new URL(url, window.location.href).origin !== window.location.origin;
  } catch {
    return false;
  }
}

function assignRef<T>(ref: Ref<T> | undefined, value: T | null): void {
  if (typeof ref === 'function') ref(value);
  else if (ref) (ref as { current: T | null }).current = value;
}

/**
 * A video with its English captions on by default, shown below the picture rather than over it:
 * the briefing's slides carry the same words in their middle, and on a phone's narrow video the
 * browser's captions wrapped up over them. The track stays (the player's own captions button
 * still turns the browser's rendering on). A video or captions file on another host is fetched
 * with CORS (captions from another origin load only that way).
 */
export function CaptionedVideo({ src, captionsUrl, label, ref, style, ...videoProps }: CaptionedVideoProps) {
  const crossOrigin = isCrossOrigin(src) || (captionsUrl !== null && isCrossOrigin(captionsUrl)) ? 'anonymous' : undefined;
  const [element, setElement] = useState<HTMLVideoElement | null>(null);
  const [caption, setCaption] = useState('');
  const attach = useCallback(
    (video: HTMLVideoElement | null) => {
      setElement(video);
      assignRef(ref, video);
    },
    [ref],
  );

  useEffect(() => {
    if (!element || !captionsUrl) return;
    const tracks = element.textTracks;
    let track: TextTrack | null = null;
    const show = () => {
      const cues = track?.activeCues;
      setCaption(cues ? Array.from(cues, (cue) => (cue as VTTCue).text).join('\n') : '');
    };
    const follow = () => {
      const next = tracks[0] ?? null;
      if (next === track) return;
      track?.removeEventListener('cuechange', show);
      track = next;
      if (!track) return;
      // Read here, drawn below the picture (not over it).
      if (track.mode !== 'hidden') track.mode = 'hidden';
      track.addEventListener('cuechange', show);
      show();
    };
    follow();
    tracks.addEventListener('addtrack', follow);
    return () => {
      tracks.removeEventListener('addtrack', follow);
      track?.removeEventListener('cuechange', show);
    };
  }, [element, captionsUrl]);

  return (
    <Box sx={{ mb: 0 }}>
      <video
        ref={attach}
        src={src}
        crossOrigin={crossOrigin}
        playsInline
        preload="metadata"
        aria-label={label}
        style={{ width: '100%', aspectRatio: '16 / 9', background: '#000', borderRadius: 8, display: 'block', ...style }}
        {...videoProps}
      >
        {captionsUrl ? <track kind="captions" src={captionsUrl} srcLang="en" label="English" default /> : null}
      </video>
      {captionsUrl ? (
        <Box
          data-captions=""
          sx={{
            minHeight: '3.2em',
            mt: 1,
            px: 1,
            py: 0.5,
            borderRadius: 1,
            bgcolor: 'grey.900',
            color: 'common.white',
            textAlign: 'center',
            whiteSpace: 'pre-line',
            lineHeight: 1.5,
          }}
        >
          {caption}
        </Box>
      ) : null}
    </Box>
  );
}
