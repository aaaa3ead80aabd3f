import CameraAltIcon from '@mui/icons-material/CameraAlt';
import PhotoLibraryIcon from '@mui/icons-material/PhotoLibrary';
import Alert from '@mui/material/Alert';
import Box from '@mui/material/Box';
import Button from '@mui/material/Button';
import CircularProgress from '@mui/material/CircularProgress';
import Dialog from '@mui/material/Dialog';
import DialogActions from '@mui/material/DialogActions';
import DialogContent from '@mui/material/DialogContent';
import DialogContentText from '@mui/material/DialogContentText';
import DialogTitle from '@mui/material/DialogTitle';
import Stack from '@mui/material/Stack';
import useMediaQuery from '@mui/material/useMediaQuery';
import { useTheme } from '@mui/material/styles';
import { useState } from 'react';
import { MESSAGES } from '@portal/contracts';
import { FilePickButton } from '../../components/FilePickButton';
import { useObjectUrl } from '../../components/useObjectUrl';
import { SelfieCamera } from './SelfieCamera';

interface PhotoDialogProps {
  open: boolean;
  busy: boolean;
  /** The failure of the last submission, shown in the dialog. */
  error: string | null;
  onClose: () => void;
  onSubmit: (photo: Blob) => void;
}

/** The verification photo step of the registration: from the files, or a selfie. */
export function PhotoDialog({ open, busy, error, onClose, onSubmit }: PhotoDialogProps) {
  const theme = useTheme();
  const fullScreen = useMediaQuery(theme.breakpoints.down('sm'));
  const [photo, setPhoto] = useState<Blob | null>(null);
  const [camera, setCamera] = useState(false);
  const [problem, setProblem] = useState<string | null>(null);
  const preview = useObjectUrl(photo);

  const choose = (picked: Blob) => {
    setProblem(null);
    setCamera(false);
    setPhoto(picked);
  };
  const reject = () => setProblem(MESSAGES.photoNotImage);

  const submit = () => {
    if (!photo) {
      setProblem(MESSAGES.photoRequired);
      return;
    }
    onSubmit(photo);
  };

  const shownError = problem ?? error;
  return (
    <Dialog
      open={open}
      onClose={busy ? undefined : onClose}
      fullScreen={fullScreen}
      fullWidth
      maxWidth="sm"
      aria-labelledby="photo-dialog-title"
      aria-describedby="photo-dialog-text"
    >
      <DialogTitle id="photo-dialog-title">Verification Photo</DialogTitle>
      <DialogContent>
        <DialogContentText id="photo-dialog-text" sx={{ mb: 2 }}>
          Please add a clear photo of your face. It is required, but used for internal identification only; not shared publicly or outside
          the team.
        </DialogContentText>
        {shownError ? (
          <Alert severity="error" sx={{ mb: 2 }}>
            {shownError}
          </Alert>
        ) : null}
        {camera ? (
          <SelfieCamera onPhoto={choose} onCancel={() => setCamera(false)} onRejectedFile={reject} />
        ) : (
          <Stack spacing={2}>
            {preview ? (
              <Box
                component="img"
                src={preview}
                alt="Your chosen photo"
                sx={{ width: '100%', maxHeight: 320, objectFit: 'contain', borderRadius: 2, bgcolor: 'grey.100' }}
              />
            ) : null}
            <FilePickButton
              accept="image/*"
              variant="outlined"
              size="large"
              startIcon={<PhotoLibraryIcon />}
              disabled={busy}
              onPick={(file) => (file.type.startsWith('image/') ? choose(file) : reject())}
            >
              Choose from Files
            </FilePickButton>
            <Button variant="outlined" size="large" startIcon={<CameraAltIcon />} disabled={busy} onClick={() => setCamera(true)}>
              Take a Selfie
            </Button>
          </Stack>
        )}
      </DialogContent>
      <DialogActions
        sx={{
          px: 3,
          pb: 3,
          flexDirection: { xs: 'column-reverse', sm: 'row' },
          gap: 1,
          '& > :not(style) ~ :not(style)': { ml: { xs: 0 } },
        }}
      >
        <Button onClick={onClose} disabled={busy} fullWidth={fullScreen}>
          Cancel
        </Button>
        <Button
          variant="contained"
          size="large"
          onClick={submit}
          disabled={!photo || busy}
          fullWidth={fullScreen}
          startIcon={busy ? <CircularProgress size={20} color="inherit" aria-hidden="true" /> : undefined}
        >
          Submit Photo and Register
        </Button>
      </DialogActions>
      {busy ? (
        <Box role="status" sx={{ px: 3, pb: 2, color: 'text.secondary' }}>
          Creating your account…
        </Box>
      ) : null}
    </Dialog>
  );
}
