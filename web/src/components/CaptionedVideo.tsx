import type { ComponentProps, Ref } from 'react';

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

/**
 * A video with its English captions on by default. A video or captions file on another host is
 * fetched with CORS (captions from another origin load only that way).
 */
export function CaptionedVideo({ src, captionsUrl, label, ref, style, ...videoProps }: CaptionedVideoProps) {
  const crossOrigin = isCrossOrigin(src) || (captionsUrl !== null && isCrossOrigin(captionsUrl)) ? 'anonymous' : undefined;
  return (
    <video
      ref={ref}
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
  );
}
