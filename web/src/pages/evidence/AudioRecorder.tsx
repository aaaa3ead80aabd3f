import DeleteIcon from '@mui/icons-material/Delete';
import FiberManualRecordIcon from '@mui/icons-material/FiberManualRecord';
import PauseIcon from '@mui/icons-material/Pause';
import PlayArrowIcon from '@mui/icons-material/PlayArrow';
import SaveIcon from '@mui/icons-material/Save';
import Alert from '@mui/material/Alert';
import Box from '@mui/material/Box';
import Button from '@mui/material/Button';
import Paper from '@mui/material/Paper';
import Stack from '@mui/material/Stack';
import Typography from '@mui/material/Typography';
import { useEffect, useRef, useState } from 'react';
import { ConfirmDialog } from '../../evidence/ConfirmDialog';
import { formatDuration } from '../../evidence/format';

/** SPEC section 9: 128000 bits per second, noise suppression and echo cancellation. */
export const AUDIO_BITS_PER_SECOND = 128_000;

/** WebM/Opus where the browser records it (Chrome, Firefox, Android); else MP4 (Safari). */
export function recordingMimeType(): string {
  if (typeof MediaRecorder === 'undefined') return '';
  for (const type of ['audio/webm;codecs=opus', 'audio/webm', 'audio/mp4;codecs=mp4a.40.2', 'audio/mp4']) {
    if (MediaRecorder.isTypeSupported(type)) return type;
  }
  return '';
}

function extensionFor(type: string): string {
  if (type.startsWith('audio/mp4')) return 'm4a';
  if (type.startsWith('audio/ogg')) return 'ogg';
  return 'webm';
}

type RecorderState = 'idle' | 'starting' | 'recording' | 'paused';

function microphoneProblem(error: unknown): string {
  const name = error instanceof DOMException ? error.name : '';
  if (name === 'NotAllowedError' || name === 'SecurityError') {
    return 'The microphone was not allowed. To record, allow this site to use the microphone in your browser settings (the lock or settings icon next to the address), then press Start Recording again. You can also upload a recording with Upload Audio.';
  }
  if (name === 'NotFoundError' || name === 'OverconstrainedError') {
    return 'No microphone was found on this device. You can upload a recording with Upload Audio instead.';
  }
  if (name === 'NotReadableError') {
    return 'The microphone is in use by another app. Close it and press Start Recording again.';
  }
  return 'Recording is not possible in this browser. You can upload a recording with Upload Audio instead.';
}

/**
 * Records sound in the browser: start, pause/resume, save and discard, with a timer counting the
 * seconds recorded. Saving hands the recording over as a file.
 */
export function AudioRecorder({ onSave }: { onSave: (file: File) => void }) {
  const [state, setState] = useState<RecorderState>('idle');
  const [seconds, setSeconds] = useState(0);
  const [problem, setProblem] = useState<string | null>(null);
  const recorder = useRef<MediaRecorder | null>(null);
  const stream = useRef<MediaStream | null>(null);
  const chunks = useRef<Blob[]>([]);
  const keep = useRef(false);
  /** Discard asks first; the recording pauses meanwhile (and goes on if kept) when it was running. */
  const [confirmingDiscard, setConfirmingDiscard] = useState<{ wasRecording: boolean } | null>(null);

  const release = () => {
    stream.current?.getTracks().forEach((track) => track.stop());
    stream.current = null;
    recorder.current = null;
  };

  // The timer: one tick per second while recording (not while paused).
  useEffect(() => {
    if (state !== 'recording') return;
    const id = window.setInterval(() => setSeconds((value) => value + 1), 1000);
    return () => window.clearInterval(id);
  }, [state]);

  // Leaving the page stops the microphone.
  useEffect(
    () => () => {
      keep.current = false;
      if (recorder.current && recorder.current.state !== 'inactive') recorder.current.stop();
      release();
    },
    [],
  );

  const start = async () => {
    setProblem(null);
    if (typeof MediaRecorder === 'undefined' || !navigator.mediaDevices?.getUserMedia) {
      setProblem(microphoneProblem(null));
      return;
    }
    setState('starting');
    try {
      const media = await navigator.mediaDevices.getUserMedia({ audio: { noiseSuppression: true, echoCancellation: true } });
      const mimeType = recordingMimeType();
      const created = new MediaRecorder(media, { ...(mimeType ? { mimeType } : {}), audioBitsPerSecond: AUDIO_BITS_PER_SECOND });
      stream.current = media;
      recorder.current = created;
      chunks.current = [];
      keep.current = false;
      created.ondataavailable = (event) => {
        if (event.data.size > 0) chunks.current.push(event.data);
      };
      created.onstop = () => {
        const type = created.mimeType || mimeType || 'audio/webm';
        const parts = chunks.current;
        chunks.current = [];
        release();
        if (keep.current && parts.length > 0) {
          const now = Date.now();
          onSave(new File(parts, `recording-${now}.${extensionFor(type)}`, { type: type.split(';')[0], lastModified: now }));
        }
      };
      created.start(1000);
      setSeconds(0);
      setState('recording');
    } catch (error) {
      console.error('microphone denied', error);
      release();
      setState('idle');
      setProblem(microphoneProblem(error));
    }
  };

  const pauseOrResume = () => {
    const current = recorder.current;
    if (!current) return;
    if (current.state === 'recording') {
      current.pause();
      setState('paused');
    } else if (current.state === 'paused') {
      current.resume();
      setState('recording');
    }
  };

  const finish = (save: boolean) => {
    keep.current = save;
    const current = recorder.current;
    if (current && current.state !== 'inactive') current.stop();
    else release();
    setState('idle');
    setSeconds(0);
  };

  const askDiscard = () => {
    const current = recorder.current;
    const wasRecording = current?.state === 'recording';
    if (wasRecording) {
      current.pause();
      setState('paused');
    }
    setConfirmingDiscard({ wasRecording });
  };

  const keepRecording = () => {
    const current = recorder.current;
    if (confirmingDiscard?.wasRecording && current?.state === 'paused') {
      current.resume();
      setState('recording');
    }
    setConfirmingDiscard(null);
  };

  const active = state === 'recording' || state === 'paused';
  return (
    <Paper variant="outlined" sx={{ p: 2 }} component="section" aria-labelledby="recorder-heading">
      <Typography id="recorder-heading" variant="h3" component="h2" gutterBottom>
        Record Audio
      </Typography>
      {problem ? (
        <Alert severity="warning" sx={{ mb: 2 }}>
          {problem}
        </Alert>
      ) : null}
      <Box sx={{ display: 'flex', alignItems: 'center', gap: 1, mb: 2 }}>
        <FiberManualRecordIcon
          aria-hidden="true"
          sx={{
            color: state === 'recording' ? 'error.main' : 'grey.400',
            animation: state === 'recording' ? 'pulse 1.2s infinite' : 'none',
            '@keyframes pulse': { '50%': { opacity: 0.3 } },
          }}
        />
        <Typography
          component="span"
          role="timer"
          aria-live="off"
          aria-label={`Recorded ${seconds} seconds`}
          data-seconds={seconds}
          sx={{ fontVariantNumeric: 'tabular-nums', fontSize: '1.5rem', fontWeight: 600 }}
        >
          {formatDuration(seconds)}
        </Typography>
        <Typography component="span" role="status" color="text.secondary">
          {state === 'recording' ? 'Recording…' : state === 'paused' ? 'Paused' : state === 'starting' ? 'Starting…' : ''}
        </Typography>
      </Box>
      {active ? (
        <Stack direction={{ xs: 'column', sm: 'row' }} spacing={1.5}>
          <Button variant="contained" startIcon={<SaveIcon />} onClick={() => finish(true)}>
            Save Recording
          </Button>
          <Button variant="outlined" startIcon={state === 'paused' ? <PlayArrowIcon /> : <PauseIcon />} onClick={pauseOrResume}>
            {state === 'paused' ? 'Resume' : 'Pause'}
          </Button>
          {/* Apart from Save (a thumb's slip away), and it asks first. */}
          <Box sx={{ flexGrow: 1, display: { xs: 'none', sm: 'block' } }} />
          <Button variant="text" color="error" startIcon={<DeleteIcon />} onClick={askDiscard}>
            Discard
          </Button>
        </Stack>
      ) : (
        <Button
          variant="contained"
          color="secondary"
          startIcon={<FiberManualRecordIcon />}
          onClick={() => void start()}
          disabled={state === 'starting'}
          fullWidth
        >
          Start Recording
        </Button>
      )}
      <ConfirmDialog
        open={confirmingDiscard !== null}
        title="Discard Recording?"
        danger
        confirmLabel="Discard"
        onCancel={keepRecording}
        onConfirm={() => {
          setConfirmingDiscard(null);
          finish(false);
        }}
      >
        {`The ${formatDuration(seconds)} recorded so far will be thrown away. Press Cancel to keep recording.`}
      </ConfirmDialog>
    </Paper>
  );
}
