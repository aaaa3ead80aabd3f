import { Suspense, lazy, useCallback, useMemo, useState, type ReactNode } from 'react';
import { NotifyContext, type Notification } from './notify-context';
import type { Shown } from './Toast';

const DEFAULT_HIDE_MS = 6000;

// The toast's components (Snackbar, its transition, the click-away listener) load with the first
// notification: most page views show none, and the first load stays smaller.
const Toast = lazy(() => import('./Toast'));

/**
 * One toast at a time above every page, so that a message survives the navigation that often
 * follows it ('New User Created!' and then /user).
 */
export function NotificationProvider({ children }: { children: ReactNode }) {
  const [shown, setShown] = useState<Shown | null>(null);
  const [open, setOpen] = useState(false);
  const [used, setUsed] = useState(false);

  const notify = useCallback((notification: Notification) => {
    setShown({ severity: 'info', autoHideMs: DEFAULT_HIDE_MS, ...notification, key: Date.now() });
    setOpen(true);
    setUsed(true);
  }, []);

  const value = useMemo(() => ({ notify }), [notify]);
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
