import type { ReactNode } from 'react';

/** The usual visually-hidden style: read by screen readers, part of an accessible name, not drawn. */
const HIDDEN = {
  border: 0,
  clip: 'rect(0 0 0 0)',
  height: 1,
  margin: -1,
  overflow: 'hidden',
  padding: 0,
  position: 'absolute',
  whiteSpace: 'nowrap',
  width: 1,
} as const;

/** Text for assistive technology only (e.g. the kind of an item before its title on a card). */
export function VisuallyHidden({ children }: { children: ReactNode }) {
  return <span style={HIDDEN}>{children}</span>;
}
