import { createContext, useContext } from 'react';

export interface Notification {
  message: string;
  severity?: 'success' | 'info' | 'warning' | 'error';
  /** Hides after this many milliseconds (default 6000, the spec's toast time). */
  autoHideMs?: number;
}

export const NotifyContext = createContext<{ notify: (notification: Notification) => void; pageChanged: () => void } | null>(null);

/** Shows a toast (an MUI Snackbar with an Alert, role=alert) above every page. */
export function useNotify(): (notification: Notification) => void {
  const context = useContext(NotifyContext);
  if (!context) throw new Error('useNotify needs a NotificationProvider');
  return context.notify;
}

/** Told by the shell at every change of page: a toast from an earlier page goes (it would cover this one). */
export function usePageChanged(): () => void {
  const context = useContext(NotifyContext);
  if (!context) throw new Error('usePageChanged needs a NotificationProvider');
  return context.pageChanged;
}
