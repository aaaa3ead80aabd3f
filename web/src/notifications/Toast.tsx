import Alert, { type AlertColor } from '@mui/material/Alert';
import Portal from '@mui/material/Portal';
import Snackbar, { type SnackbarCloseReason } from '@mui/material/Snackbar';
import type { SyntheticEvent } from 'react';
import type { Notification } from './notify-context';

export interface Shown extends Required<Notification> {
  key: number;
}

interface ToastProps {
  shown: Shown | null;
  open: boolean;
  onClose: () => void;
  onExited: () => void;
}

/**
 * The toast itself (loaded with the first notification, see NotificationProvider). It is rendered
 * into <body>, outside the app's root: while a dialog is open MUI hides the root from assistive
 * technology (aria-hidden), and a toast inside it would be seen but never announced.
 */
export default function Toast({ shown, open, onClose, onExited }: ToastProps) {
  const close = (_event: SyntheticEvent | Event, reason?: SnackbarCloseReason) => {
    if (reason === 'clickaway') return;
    onClose();
  };
  return (
    <Portal>
      <Snackbar
        key={shown?.key}
        open={open}
        autoHideDuration={shown?.autoHideMs}
        onClose={close}
        anchorOrigin={{ vertical: 'bottom', horizontal: 'center' }}
        // At the bottom, beside the column of the red add button and its options (56 px wide at
        // 16 px from the right edge on a phone): never over the navigation bar's buttons, the page's
        // title, the add button or what it opens. Wider screens centre it, far from the button.
        sx={{ bottom: { xs: 16, sm: 24 }, right: { xs: 88, sm: 'auto' } }}
        slotProps={{ transition: { onExited } }}
      >
        {shown ? (
          <Alert severity={shown.severity as AlertColor} variant="filled" onClose={onClose} sx={{ width: '100%' }}>
            {shown.message}
          </Alert>
        ) : undefined}
      </Snackbar>
    </Portal>
  );
}
