import PauseIcon from '@mui/icons-material/Pause';
import PlayArrowIcon from '@mui/icons-material/PlayArrow';
import Alert from '@mui/material/Alert';
import Box from '@mui/material/Box';
import Button from '@mui/material/Button';
import CircularProgress from '@mui/material/CircularProgress';
import Dialog from '@mui/material/Dialog';
import DialogActions from '@mui/material/DialogActions';
import DialogContent from '@mui/material/DialogContent';
import DialogContentText from '@mui/material/DialogContentText';
import DialogTitle from '@mui/material/DialogTitle';
import useMediaQuery from '@mui/material/useMediaQuery';
import { useTheme } from '@mui/material/styles';
import { useQueryClient } from '@tanstack/react-query';
import { useRef, useState } from 'react';
import { Link as RouterLink, useNavigate } from 'react-router';
import { MESSAGES, type PublicConfig, type User } from '@portal/contracts';
import { messageOf } from '../../api/http';
import { markVideoWatched } from '../../api/account';
import { useSignOut } from '../../auth/session';
import { reloadCurrentUser, setCurrentUser } from '../../auth/useCurrentUser';
import { CaptionedVideo } from '../../components/CaptionedVideo';

/** Native controls (and so seeking) become available once playback has passed this many seconds. */
export const CONTROLS_UNLOCK_SECONDS = 3;

/**
 * The first visit of a participant: the onboarding video in a modal that cannot be dismissed,
 * then the acknowledgement. 'I understand' records it on the server and opens the home page.
 */
export function OnboardingDialog({ user, config }: { user: User; config: PublicConfig }) {
  const theme = useTheme();
  const fullScreen = useMediaQuery(theme.breakpoints.down('sm'));
  const client = useQueryClient();
  const navigate = useNavigate();
  const signOut = useSignOut();
  const video = useRef<HTMLVideoElement>(null);
  const playButton = useRef<HTMLButtonElement>(null);
  const [controlsUnlocked, setControlsUnlocked] = useState(false);
  const [playing, setPlaying] = useState(false);
  const [acknowledging, setAcknowledging] = useState(false);
  const [saving, setSaving] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const [loadFailed, setLoadFailed] = useState(false);

  const togglePlay = () => {
    const element = video.current;
    if (!element) return;
    if (element.paused) {
      element.play().catch((failure: unknown) => console.warn('the video did not start', failure));
    } else {
      element.pause();
    }
  };

  // On a weak connection the video may not arrive: the participant can try again (they cannot go on without it).
  const reload = () => {
    setLoadFailed(false);
    video.current?.load();
  };

  const rewatch = () => {
    setAcknowledging(false);
    setError(null);
    const element = video.current;
    if (!element) return;
    element.currentTime = 0;
    element.play().catch((failure: unknown) => console.warn('the video did not start', failure));
  };

  const acknowledge = async () => {
    setSaving(true);
    setError(null);
    try {
      // The cached user changes and the page changes in the same render, so the home page's
      // "watched?" guard already sees the new flag; then the user is reloaded from the server.
      setCurrentUser(client, await markVideoWatched(user.id));
      void navigate('/home-validate');
      void reloadCurrentUser(client);
    } catch (failure) {
      console.warn('video watched was not recorded', failure);
      setError(messageOf(failure, MESSAGES.internal));
      setSaving(false);
    }
  };

  return (
    <>
      <Dialog open disableEscapeKeyDown fullScreen={fullScreen} fullWidth maxWidth="md" aria-labelledby="onboarding-title">
        <DialogTitle id="onboarding-title">{`Welcome to ${config.productName}`}</DialogTitle>
        <DialogContent>
          <DialogContentText sx={{ mb: 2 }}>
            Before you begin, please watch this short briefing to the end. Captions are on; use headphones if you can.
          </DialogContentText>
          <CaptionedVideo
            ref={video}
            src={config.onboardingVideo.url}
            captionsUrl={config.onboardingVideo.captionsUrl}
            label="Onboarding video"
            preload="auto"
            controls={controlsUnlocked}
            // With its controls, the player is on the keyboard's way (Space plays and pauses it).
            tabIndex={controlsUnlocked ? 0 : -1}
            onPlay={() => setPlaying(true)}
            onPause={() => setPlaying(false)}
            onTimeUpdate={(event) => {
              if (controlsUnlocked || event.currentTarget.currentTime <= CONTROLS_UNLOCK_SECONDS) return;
              // The player's own controls take over from the Play/Pause button; whoever was on the button by
              // keyboard is put on the player (Space plays and pauses it), not dropped to the top of the dialog.
              if (document.activeElement === playButton.current) event.currentTarget.focus();
              setControlsUnlocked(true);
            }}
            onEnded={() => {
              setPlaying(false);
              setAcknowledging(true);
            }}
            onError={() => {
              setPlaying(false);
              setLoadFailed(true);
            }}
          />
          {loadFailed ? (
            <Alert
              severity="error"
              sx={{ mt: 2 }}
              action={
                <Button color="inherit" size="small" onClick={reload} sx={{ whiteSpace: 'nowrap' }}>
                  Try Again
                </Button>
              }
            >
              The video could not be loaded. Check your connection and try again.
            </Alert>
          ) : null}
        </DialogContent>
        <DialogActions
          sx={{ px: 3, pb: 3, flexDirection: 'column', alignItems: 'stretch', gap: 1, '& > :not(style) ~ :not(style)': { ml: 0 } }}
        >
          {/* SPEC: before the player's own controls appear (after 3 s of playback), a Play/Pause button; then they replace it. */}
          {controlsUnlocked ? null : (
            <Button
              ref={playButton}
              variant="contained"
              size="large"
              fullWidth
              startIcon={playing ? <PauseIcon /> : <PlayArrowIcon />}
              onClick={togglePlay}
            >
              {playing ? 'Pause' : 'Play'}
            </Button>
          )}
          {/* A phone that cannot play the video is not a trap: help, or leave. */}
          <Box sx={{ display: 'flex', justifyContent: 'space-between', gap: 1 }}>
            <Button component={RouterLink} to="/help">
              Help
            </Button>
            <Button onClick={() => void signOut().then(() => navigate('/'))}>Log Out</Button>
          </Box>
        </DialogActions>
      </Dialog>
      <Dialog open={acknowledging} disableEscapeKeyDown aria-labelledby="acknowledgement-title" aria-describedby="acknowledgement-text">
        <DialogTitle id="acknowledgement-title">Video Instruction Acknowledgement</DialogTitle>
        <DialogContent>
          <DialogContentText id="acknowledgement-text">
            Please confirm that you watched the video and understood the instructions. You can watch it again at any time under Help.
          </DialogContentText>
          {error ? (
            <Alert severity="error" sx={{ mt: 2 }}>
              {error}
            </Alert>
          ) : null}
        </DialogContent>
        <DialogActions sx={{ px: 3, pb: 3, gap: 1, flexWrap: 'wrap' }}>
          <Button onClick={rewatch} disabled={saving}>
            Rewatch Video
          </Button>
          <Button
            variant="contained"
            onClick={() => void acknowledge()}
            disabled={saving}
            startIcon={saving ? <CircularProgress size={20} color="inherit" aria-hidden="true" /> : undefined}
          >
            I understand
          </Button>
        </DialogActions>
      </Dialog>
    </>
  );
}
