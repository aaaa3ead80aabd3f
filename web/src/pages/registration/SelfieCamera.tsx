import CameraAltIcon from '@mui/icons-material/CameraAlt';
import Alert from '@mui/material/Alert';
import Box from '@mui/material/Box';
import Button from '@mui/material/Button';
import CircularProgress from '@mui/material/CircularProgress';
import Stack from '@mui/material/Stack';
import { useEffect, useRef, useState } from 'react';
import { FilePickButton } from '../../components/FilePickButton';

type CameraState = 'starting' | 'live' | 'unavailable';

interface SelfieCameraProps {
  onPhoto: (photo: Blob) => void;
  onCancel: () => void;
  onRejectedFile: (file: File) => void;
}

/** Captures one frame of the video stream as a JPEG, at the camera's own resolution. */
function captureFrame(video: HTMLVideoElement): Promise<Blob> {
  const canvas = document.createElement('canvas');
  canvas.width = video.videoWidth;
  canvas.height = video.videoHeight;
  const context = canvas.getContext('2d');
  if (!context) return Promise.reject(new Error('No 2D canvas'));
  context.drawImage(video, 0, 0, canvas.width, canvas.height);
  return new Promise((resolve, reject) =>
    canvas.toBlob((blob) => (blob ? resolve(blob) : reject(new Error('The frame could not be encoded'))), 'image/jpeg', 0.9),
  );
}

/**
 * The front camera in the page (getUserMedia). Where there is no camera, or permission is
 * refused, the phone's own camera is offered through a file input with capture="user".
 */
export function SelfieCamera({ onPhoto, onCancel, onRejectedFile }: SelfieCameraProps) {
  const video = useRef<HTMLVideoElement>(null);
  const [state, setState] = useState<CameraState>('starting');
  const [capturing, setCapturing] = useState(false);

  useEffect(() => {
    if (!navigator.mediaDevices?.getUserMedia) {
      setState('unavailable');
      return;
    }
    let cancelled = false;
    let stream: MediaStream | null = null;
    navigator.mediaDevices
      .getUserMedia({ video: { facingMode: 'user', width: { ideal: 1280 }, height: { ideal: 960 } }, audio: false })
      .then(async (opened) => {
        if (cancelled || !video.current) {
          opened.getTracks().forEach((track) => track.stop());
          return;
        }
        stream = opened;
        video.current.srcObject = opened;
        await video.current.play();
        if (!cancelled) setState('live');
      })
      .catch((error: unknown) => {
        console.warn('camera unavailable', error);
        if (!cancelled) setState('unavailable');
      });
    return () => {
      cancelled = true;
      stream?.getTracks().forEach((track) => track.stop());
    };
  }, []);

  const capture = async () => {
    if (!video.current) return;
    setCapturing(true);
    try {
      onPhoto(await captureFrame(video.current));
    } catch (error) {
      console.warn('capture failed', error);
      setState('unavailable');
    } finally {
      setCapturing(false);
    }
  };

  if (state === 'unavailable') {
    return (
      <Stack spacing={2}>
        <Alert severity="info">
          The camera is not available here. Take a picture with your phone&apos;s camera instead, or choose a photo from your files.
        </Alert>
        <FilePickButton
          accept="image/*"
          capture="user"
          variant="contained"
          startIcon={<CameraAltIcon />}
          onPick={(file) => (file.type.startsWith('image/') ? onPhoto(file) : onRejectedFile(file))}
        >
          Open Camera
        </FilePickButton>
        <Button onClick={onCancel}>Back</Button>
      </Stack>
    );
  }

  return (
    <Stack spacing={2}>
      <Box sx={{ position: 'relative', bgcolor: 'grey.900', borderRadius: 2, overflow: 'hidden', aspectRatio: '4 / 3' }}>
        <video
          ref={video}
          muted
          playsInline
          aria-label="Camera preview"
          style={{ width: '100%', height: '100%', objectFit: 'cover', transform: 'scaleX(-1)', display: 'block' }}
        />
        {state === 'starting' ? (
          <Box role="status" sx={{ position: 'absolute', inset: 0, display: 'grid', placeItems: 'center', color: 'common.white' }}>
            <CircularProgress color="inherit" aria-label="Starting the camera" />
          </Box>
        ) : null}
      </Box>
      <Button
        variant="contained"
        size="large"
        startIcon={<CameraAltIcon />}
        disabled={state !== 'live' || capturing}
        onClick={() => void capture()}
      >
        Capture Photo
      </Button>
      <Button onClick={onCancel}>Back</Button>
    </Stack>
  );
}
