import { createContext, useContext } from 'react';

export interface Notification {
  message: string;
  severity?: 'success' | 'info' | 'warning' | 'error';
  /** Hides after this many milliseconds (default 6000, the spec's toast time). */
  autoHideMs?: number;
}

export const NotifyContext = createContext<{ notify: (notification: Notification) => void } | null>(null);

/** Shows a toast (an MUI Snackbar with an Alert, role=alert) above every page. */
export function useNotify(): (notification: Notification) => void {
  const context = useContext(NotifyContext);
  if (!context) throw new Error('useNotify needs a NotificationProvider');
  return context.notify;
}
