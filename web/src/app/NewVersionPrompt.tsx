import Alert from '@mui/material/Alert';
import Button from '@mui/material/Button';
import Portal from '@mui/material/Portal';

/** "A new version is available": shown when the service worker has a new release waiting. */
export default function NewVersionPrompt({ onReload, onLater }: { onReload: () => void; onLater: () => void }) {
  return (
    <Portal>
      <Alert
        severity="info"
        variant="filled"
        role="status"
        onClose={onLater}
        action={
          <Button color="inherit" size="small" onClick={onReload} sx={{ minHeight: 36 }}>
            Reload
          </Button>
        }
        sx={{ position: 'fixed', left: 16, right: 16, bottom: 16, zIndex: (theme) => theme.zIndex.snackbar, maxWidth: 560, mx: 'auto' }}
      >
        A new version of the portal is available.
      </Alert>
    </Portal>
  );
}
