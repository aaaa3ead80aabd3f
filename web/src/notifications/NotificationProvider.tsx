import { Suspense, lazy, useCallback, useMemo, useRef, useState, type ReactNode } from 'react';
import { NotifyContext, type Notification } from './notify-context';
import type { Shown } from './Toast';

const DEFAULT_HIDE_MS = 6000;
/** How long after it is shown a toast still follows a navigation to the next page. */
const NAVIGATION_GRACE_MS = 1000;

// The toast's components (Snackbar, its transition, the click-away listener) load with the first
// notification: most page views show none, and the first load stays smaller.
const Toast = lazy(() => import('./Toast'));

/**
 * One toast at a time above every page, so that a message survives the navigation that often
 * follows it ('New User Created!' and then /user), but not the participant's next move to another
 * page, where it would cover what they came for.
 */
export function NotificationProvider({ children }: { children: ReactNode }) {
  const [shown, setShown] = useState<Shown | null>(null);
  const [open, setOpen] = useState(false);
  const [used, setUsed] = useState(false);

  const notify = useCallback((notification: Notification) => {
    shownAt.current = Date.now();
    setShown({ severity: 'info', autoHideMs: DEFAULT_HIDE_MS, ...notification, key: shownAt.current });
    setOpen(true);
    setUsed(true);
  }, []);

  // A toast shown just before a navigation ('New User Created!', then /user) stays on the next page;
  // one shown on a page goes when the participant moves on to another.
  const shownAt = useRef(0);
  const pageChanged = useCallback(() => {
    if (Date.now() - shownAt.current > NAVIGATION_GRACE_MS) setOpen(false);
  }, []);

  const value = useMemo(() => ({ notify, pageChanged }), [notify, pageChanged]);
  return (
    <NotifyContext value={value}>
      {children}
      {used ? (
        <Suspense fallback={null}>
          <Toast shown={shown} open={open} onClose={() => setOpen(false)} onExited={() => setShown(null)} />
        </Suspense>
      ) : null}
    </NotifyContext>
  );
}
