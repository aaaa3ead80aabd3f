import ArrowBackIcon from '@mui/icons-material/ArrowBack';
import AudioFileIcon from '@mui/icons-material/AudioFile';
import PhotoCameraIcon from '@mui/icons-material/PhotoCamera';
import UploadFileIcon from '@mui/icons-material/UploadFile';
import VideocamIcon from '@mui/icons-material/Videocam';
import Alert from '@mui/material/Alert';
import Button from '@mui/material/Button';
import Stack from '@mui/material/Stack';
import Typography from '@mui/material/Typography';
import { useLocation, useNavigate } from 'react-router';
import { MESSAGES } from '@portal/contracts';
import { FilePickButton } from '../../components/FilePickButton';
import { Page } from '../../components/Page';
import { kindFromState, selectMedia, useEvidenceSelection, type EvidenceKind } from '../../evidence/selection';
import { AudioRecorder } from './AudioRecorder';

function BackButton() {
  const navigate = useNavigate();
  return (
    <Button variant="text" startIcon={<ArrowBackIcon />} onClick={() => void navigate('/evidence')} sx={{ alignSelf: 'flex-start' }}>
      Back
    </Button>
  );
}

/** /evidenceupload: how to add the media, depending on the kind chosen with the plus button. */
export default function EvidenceUploadPage() {
  const location = useLocation();
  const navigate = useNavigate();
  const selection = useEvidenceSelection();
  const kind: EvidenceKind | null = kindFromState(location.state) ?? selection.kind;

  const pick = (file: File) => {
    selectMedia(file);
    void navigate('/evidence-details', { state: { kind } });
  };

  if (!kind) {
    return (
      <Page title="Upload Evidence">
        <Stack spacing={2}>
          <Alert severity="info">{MESSAGES.noTypeChosen}</Alert>
          <BackButton />
        </Stack>
      </Page>
    );
  }

  if (kind === 'audio') {
    return (
      <Page title="Upload Audio">
        <Stack spacing={2}>
          <Typography>Record what you hear with the microphone, or upload a recording from this device.</Typography>
          <AudioRecorder onSave={pick} />
          <FilePickButton accept="audio/*" variant="outlined" size="large" startIcon={<AudioFileIcon />} onPick={pick} fullWidth>
            Upload Audio
          </FilePickButton>
          <BackButton />
        </Stack>
      </Page>
    );
  }

  return (
    <Page title="Upload Evidence">
      <Stack spacing={2}>
        <Typography>Take a picture or record a video with the camera, or upload one from this device.</Typography>
        <FilePickButton accept="image/*,video/*" variant="contained" size="large" startIcon={<UploadFileIcon />} onPick={pick} fullWidth>
          Upload File
        </FilePickButton>
        <FilePickButton
          accept="image/*"
          capture="environment"
          variant="outlined"
          size="large"
          startIcon={<PhotoCameraIcon />}
          onPick={pick}
          fullWidth
        >
          Take Picture
        </FilePickButton>
        <FilePickButton
          accept="video/*"
          capture="environment"
          variant="outlined"
          size="large"
          startIcon={<VideocamIcon />}
          onPick={pick}
          fullWidth
        >
          Record Video
        </FilePickButton>
        <BackButton />
      </Stack>
    </Page>
  );
}
