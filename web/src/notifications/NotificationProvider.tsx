import Alert, { type AlertColor } from '@mui/material/Alert';
import Portal from '@mui/material/Portal';
import Snackbar, { type SnackbarCloseReason } from '@mui/material/Snackbar';
import { useCallback, useMemo, useState, type ReactNode, type SyntheticEvent } from 'react';
import { NotifyContext, type Notification } from './notify-context';

interface Shown extends Required<Notification> {
  key: number;
}

const DEFAULT_HIDE_MS = 6000;

/**
 * One toast at a time above every page, so that a message survives the navigation that often
 * follows it ('New User Created!' and then /user). It is rendered into <body>, outside the app's
 * root: while a dialog is open MUI hides the root from assistive technology (aria-hidden), and a
 * toast inside it would be seen but never announced.
 */
export function NotificationProvider({ children }: { children: ReactNode }) {
  const [shown, setShown] = useState<Shown | null>(null);
  const [open, setOpen] = useState(false);

  const notify = useCallback((notification: Notification) => {
    setShown({ severity: 'info', autoHideMs: DEFAULT_HIDE_MS, ...notification, key: Date.now() });
    setOpen(true);
  }, []);

  const close = (_event: SyntheticEvent | Event, reason?: SnackbarCloseReason) => {
    if (reason === 'clickaway') return;
    setOpen(false);
  };

  const value = useMemo(() => ({ notify }), [notify]);
  return (
    <NotifyContext value={value}>
      {children}
      <Portal>
        <Snackbar
          key={shown?.key}
          open={open}
          autoHideDuration={shown?.autoHideMs ?? DEFAULT_HIDE_MS}
          onClose={close}
          anchorOrigin={{ vertical: 'top', horizontal: 'center' }}
          slotProps={{ transition: { onExited: () => setShown(null) } }}
        >
          {shown ? (
            <Alert severity={shown.severity as AlertColor} variant="filled" onClose={() => setOpen(false)} sx={{ width: '100%' }}>
              {shown.message}
            </Alert>
          ) : undefined}
        </Snackbar>
      </Portal>
    </NotifyContext>
  );
}
