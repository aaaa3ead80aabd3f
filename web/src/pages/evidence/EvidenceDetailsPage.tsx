import { zodResolver } from '@hookform/resolvers/zod';
import ArrowBackIcon from '@mui/icons-material/ArrowBack';
import Alert from '@mui/material/Alert';
import Box from '@mui/material/Box';
import Button from '@mui/material/Button';
import Checkbox from '@mui/material/Checkbox';
import CircularProgress from '@mui/material/CircularProgress';
import FormControlLabel from '@mui/material/FormControlLabel';
import LinearProgress from '@mui/material/LinearProgress';
import Stack from '@mui/material/Stack';
import TextField from '@mui/material/TextField';
import Typography from '@mui/material/Typography';
import { useQueryClient } from '@tanstack/react-query';
import { useEffect, useId, useRef, useState } from 'react';
import { useForm } from 'react-hook-form';
import { useLocation, useNavigate } from 'react-router';
import { z } from 'zod';
import {
  DEFAULT_EVIDENCE_TITLE,
  DEFAULT_PUBLIC_LOCATION_DECIMALS,
  MESSAGES,
  notesField,
  publicLocationMetres,
  titleField,
} from '@portal/contracts';
import { createNote } from '../../api/evidence';
import { messageOf } from '../../api/http';
import { FormError } from '../../components/FormParts';
import { Page } from '../../components/Page';
import { usePublicConfig } from '../../config/usePublicConfig';
import { currentPosition } from '../../evidence/location';
import { refreshEvidence } from '../../evidence/queries';
import { clearSelection, kindFromState, useEvidenceSelection } from '../../evidence/selection';
import { UploadError, startUpload, type RunningUpload } from '../../evidence/upload';
import { useCurrentUser } from '../../auth/useCurrentUser';
import { useNotify } from '../../notifications/notify-context';
import { askPersistentStorage, isRefusal, keepCapture, sendEntry, stopSending, storageRoom } from '../../outbox/runner';
import { deleteEntry, getEntry, updateEntry, type OutboxEntry } from '../../outbox/store';
import { MediaPreview } from './MediaPreview';
import { useOnline } from '../../components/useOnline';

const detailsSchema = z.object({ title: titleField, notes: notesField });
type DetailsInput = z.input<typeof detailsSchema>;
type DetailsOutput = z.output<typeof detailsSchema>;

/** SPEC section 9: after a successful upload, the evidence list comes after 2 seconds. */
export const NAVIGATE_AFTER_MS = 2000;

/** Said when a capture is kept on the phone to be sent later. */
export const KEPT_FOR_LATER = 'Saved on this phone. It will upload by itself when the network is back.';
/** Said while a kept capture is being sent: leaving the screen loses nothing. */
export const KEPT_WHILE_SENDING = 'Saved on this phone: if you leave this screen, it will upload by itself later.';
/** Said when the upload call failed but the capture is kept on the phone (it is tried again by itself). */
export const KEPT_AFTER_FAILURE = 'Saved on this phone. The upload did not go through this time; it will be tried again by itself.';
/** Said on the form while the phone has no network, before anything is pressed. */
export const OFFLINE_BEFORE_UPLOAD =
  'You are offline. Upload Evidence saves it on this phone, and it uploads by itself when the network is back.';
/** Said when the phone has no room to keep a capture for later. */
export const STORAGE_FULL =
  "This phone's storage is full, so this evidence cannot be kept for later: stay on this screen with a connection until it is uploaded, or free some space.";

/** The outbox entry of this form: one per capture, whatever how often Upload Evidence is pressed. */
function newEntry(userId: string, media: File | null, fields: { title: string; notes: string; location: string | null }): OutboxEntry {
  const now = Date.now();
  return {
    id: crypto.randomUUID(),
    userId,
    createdAt: now,
    updatedAt: now,
    ...fields,
    file: media,
    fileName: media?.name ?? null,
    fileType: media?.type ?? null,
    size: media?.size ?? 0,
    state: 'waiting',
    sent: 0,
    error: null,
    refused: false,
    uploadUrl: null,
    itemId: null,
  };
}

type Phase = { name: 'editing' } | { name: 'uploading' } | { name: 'done' };

interface LocationState {
  wanted: boolean;
  value: string | null;
  finding: boolean;
  problem: string | null;
}

/** /evidence-details: the title and notes for the chosen media (or a note alone), then the upload. */
export default function EvidenceDetailsPage() {
  const client = useQueryClient();
  const navigate = useNavigate();
  const routerLocation = useLocation();
  const selection = useEvidenceSelection();
  const locationNoticeId = useId();
  const locationDecimals = usePublicConfig().data?.publicLocationDecimals ?? DEFAULT_PUBLIC_LOCATION_DECIMALS;
  const kind = kindFromState(routerLocation.state) ?? selection.kind;
  // The media being sent stays shown (with its full progress bar) after the selection is cleared.
  const [sent, setSent] = useState<File | null>(null);
  const media = selection.media ?? sent;
  const [phase, setPhase] = useState<Phase>({ name: 'editing' });
  const [progress, setProgress] = useState<{ sent: number; total: number } | null>(null);
  const [offline, setOffline] = useState(false);
  const [failure, setFailure] = useState<string | null>(null);
  const [place, setPlace] = useState<LocationState>({ wanted: false, value: null, finding: false, problem: null });
  const running = useRef<RunningUpload | null>(null);
  /** This form's outbox entry, once kept (pressing Upload Evidence again sends the same one). */
  const kept = useRef<string | null>(null);
  const [storageFull, setStorageFull] = useState(false);
  /** Whether the capture being sent is kept in the outbox (then leaving the screen loses nothing). */
  const [keptNow, setKeptNow] = useState(false);
  const online = useOnline();
  const statusRef = useRef<HTMLDivElement>(null);
  const { user } = useCurrentUser();
  const notify = useNotify();

  const {
    register,
    handleSubmit,
    formState: { errors },
  } = useForm<DetailsInput, unknown, DetailsOutput>({
    resolver: zodResolver(detailsSchema),
    defaultValues: { title: DEFAULT_EVIDENCE_TITLE, notes: '' },
  });

  const busy = phase.name !== 'editing';

  // While sending what is not kept on the phone, leaving the page would lose it: the browser asks first.
  useEffect(() => {
    if (phase.name !== 'uploading' || keptNow) return;
    const warn = (event: BeforeUnloadEvent) => {
      event.preventDefault();
    };
    window.addEventListener('beforeunload', warn);
    return () => window.removeEventListener('beforeunload', warn);
  }, [phase.name, keptNow]);

  // The progress in view on a phone (below the preview and the form, it would be off screen).
  useEffect(() => {
    if (phase.name === 'uploading') statusRef.current?.scrollIntoView({ block: 'nearest' });
  }, [phase.name]);

  // On success: the evidence list after 2 seconds.
  useEffect(() => {
    if (phase.name !== 'done') return;
    const id = window.setTimeout(() => void navigate('/evidence'), NAVIGATE_AFTER_MS);
    return () => window.clearTimeout(id);
  }, [phase.name, navigate]);

  useEffect(
    () => () => {
      running.current?.abort();
      // Left while sending: the outbox goes on with it (on the Evidence page, or at the next open).
      if (kept.current) stopSending(kept.current);
    },
    [],
  );

  /**
   * Keeps the capture in the outbox (the first time), or brings the kept one up to date; answers
   * its id, or null when the phone has no room (the upload then goes straight from this page).
   */
  const keep = async (fields: { title: string; notes: string; location: string | null }): Promise<string | null> => {
    if (!user || typeof indexedDB === 'undefined') return null;
    const existing = kept.current ? await getEntry(kept.current) : null;
    if (existing) {
      const changed = existing.title !== fields.title || existing.notes !== fields.notes || existing.location !== fields.location;
      // New words make a new upload (the old one's metadata is fixed); the key stays, so still one item.
      await updateEntry(existing.id, {
        ...fields,
        state: 'waiting',
        refused: false,
        error: null,
        ...(changed ? { uploadUrl: null, sent: 0 } : {}),
      });
      return existing.id;
    }
    // The first capture asks the browser to keep this site's storage (the outbox) for good.
    void askPersistentStorage();
    const room = media ? await storageRoom() : null;
    if (room !== null && media && room < media.size * 1.1) return null;
    const entry = newEntry(user.id, media, fields);
    const problem = await keepCapture(entry).catch((error: unknown) => {
      console.warn('outbox: the capture was not kept', error);
      return 'storage-full' as const;
    });
    if (problem) return null;
    kept.current = entry.id;
    return entry.id;
  };

  const toggleLocation = async (wanted: boolean) => {
    if (!wanted) {
      setPlace({ wanted: false, value: null, finding: false, problem: null });
      return;
    }
    setPlace({ wanted: true, value: null, finding: true, problem: null });
    try {
      const value = await currentPosition();
      setPlace((current) => (current.wanted ? { wanted: true, value, finding: false, problem: null } : current));
    } catch (error) {
      setPlace((current) =>
        current.wanted
          ? { wanted: true, value: null, finding: false, problem: error instanceof Error ? error.message : String(error) }
          : current,
      );
    }
  };

  const submit = handleSubmit(async (values) => {
    setFailure(null);
    const location = place.wanted ? place.value : null;
    const fields = { title: values.title, notes: values.notes, location };
    const entryId = await keep(fields);
    setStorageFull(entryId === null && Boolean(user) && typeof indexedDB !== 'undefined');
    setKeptNow(entryId !== null);
    if (entryId && navigator.onLine === false) {
      // No network: the outbox sends it when the network is back (Background Sync, or the next open).
      clearSelection();
      notify({ message: KEPT_FOR_LATER, severity: 'info' });
      void navigate('/evidence');
      return;
    }
    setPhase({ name: 'uploading' });
    if (entryId) {
      try {
        if (media) {
          setSent(media);
          setProgress({ sent: 0, total: media.size });
        }
        const outcome = await sendEntry(entryId, {
          onProgress: (sent, total) => setProgress({ sent, total }),
          onWaitingForNetwork: setOffline,
        });
        if (!outcome) {
          // Sent from elsewhere meanwhile (another tab, the service worker): the Evidence page shows it.
          clearSelection();
          void navigate('/evidence');
          return;
        }
        clearSelection();
        void refreshEvidence(client);
        setPhase({ name: 'done' });
      } catch (error) {
        console.error('evidence entry failed', error);
        if (!isRefusal(error)) {
          // The capture is kept and will be sent again by itself: entering it again would make a second one.
          clearSelection();
          notify({ message: KEPT_AFTER_FAILURE, severity: 'info' });
          void navigate('/evidence');
          return;
        }
        // Refused (too large, not media): nothing to keep; the form stays to choose again.
        kept.current = null;
        setKeptNow(false);
        await deleteEntry(entryId).catch(() => undefined);
        setFailure(
          error instanceof UploadError
            ? error.message
            : messageOf(error, 'The evidence could not be saved. Check your connection and try again.'),
        );
        setPhase({ name: 'editing' });
      }
      return;
    }
    try {
      if (media) {
        setSent(media);
        setProgress({ sent: 0, total: media.size });
        const upload = startUpload(
          media,
          { title: values.title, notes: values.notes, location },
          {
            onProgress: (sent, total) => setProgress({ sent, total }),
            onWaitingForNetwork: setOffline,
          },
        );
        running.current = upload;
        await upload.done;
        running.current = null;
      } else {
        await createNote({ title: values.title, notes: values.notes, location });
      }
      clearSelection();
      void refreshEvidence(client);
      setPhase({ name: 'done' });
    } catch (error) {
      running.current = null;
      console.error('evidence entry failed', error);
      setFailure(
        error instanceof UploadError
          ? error.message
          : messageOf(error, 'The evidence could not be saved. Check your connection and try again.'),
      );
      setPhase({ name: 'editing' });
    }
  });

  const mediaMissing = !media && (kind === 'camera' || kind === 'audio');
  if (mediaMissing && phase.name === 'editing') {
    return (
      <Page title="Evidence Details">
        <Stack spacing={2}>
          <Alert severity="info">The chosen media is no longer here (the page was reloaded or left). Please choose it again.</Alert>
          <Button variant="contained" onClick={() => void navigate('/evidenceupload', { state: { kind } })}>
            Choose Media
          </Button>
          <Button startIcon={<ArrowBackIcon />} onClick={() => void navigate('/evidence')} sx={{ alignSelf: 'flex-start' }}>
            Back
          </Button>
        </Stack>
      </Page>
    );
  }

  const percent =
    phase.name === 'done' ? 100 : progress && progress.total > 0 ? Math.min(100, Math.round((progress.sent / progress.total) * 100)) : 0;
  return (
    <Page title="Evidence Details">
      {media ? <MediaPreview file={media} /> : null}
      <form onSubmit={(event) => void submit(event)} noValidate aria-label="Evidence details">
        <FormError>{failure}</FormError>
        {!online && phase.name === 'editing' ? (
          <Alert severity="info" sx={{ my: 1 }}>
            {user && typeof indexedDB !== 'undefined'
              ? OFFLINE_BEFORE_UPLOAD
              : 'You are offline. The upload starts when the network is back.'}
          </Alert>
        ) : null}
        {storageFull ? (
          <Alert severity="warning" sx={{ my: 1 }}>
            {STORAGE_FULL}
          </Alert>
        ) : null}
        <TextField
          label="Title"
          required
          disabled={busy}
          {...register('title')}
          error={Boolean(errors.title)}
          helperText={errors.title?.message}
        />
        <TextField
          label="Notes"
          multiline
          minRows={4}
          disabled={busy}
          {...register('notes')}
          error={Boolean(errors.notes)}
          helperText={errors.notes?.message}
        />
        <FormControlLabel
          sx={{ mt: 1 }}
          control={
            <Checkbox
              checked={place.wanted}
              disabled={busy}
              onChange={(event) => void toggleLocation(event.target.checked)}
              slotProps={{ input: { 'aria-describedby': locationNoticeId } }}
            />
          }
          label="Add my location"
        />
        <Typography id={locationNoticeId} variant="body2" color="text.secondary" sx={{ mb: 1 }}>
          {`Administrators see your exact position. If this evidence is published, the public archive shows it only to within about ${publicLocationMetres(locationDecimals)} m.`}
        </Typography>
        {place.wanted ? (
          <Box sx={{ mb: 1 }} aria-live="polite">
            {place.finding ? (
              <Typography variant="body2" sx={{ display: 'flex', alignItems: 'center', gap: 1 }}>
                <CircularProgress size={16} aria-hidden="true" /> Finding your location…
              </Typography>
            ) : null}
            {place.value ? <Typography variant="body2">{`Location: ${place.value}`}</Typography> : null}
            {place.problem ? <Alert severity="warning">{place.problem}</Alert> : null}
          </Box>
        ) : null}
        <Box ref={statusRef} sx={{ scrollMarginBottom: 96 }}>
          {phase.name === 'uploading' ? (
            <Box role="status" aria-live="polite" sx={{ my: 2 }}>
              {/* SPEC's warning where closing the screen would lose the evidence: it is not kept on the phone. */}
              {keptNow ? null : <Typography sx={{ fontWeight: 700, color: 'error.main', mb: 1 }}>{MESSAGES.doNotClose}</Typography>}
              <Stack direction="row" spacing={1.5} alignItems="center">
                <CircularProgress size={28} aria-hidden="true" />
                <Typography>
                  {offline ? 'Waiting for the connection… The upload will go on by itself.' : media ? `Uploading… ${percent}%` : 'Saving…'}
                </Typography>
              </Stack>
              {keptNow ? (
                <Typography variant="body2" color="text.secondary" sx={{ mt: 1 }}>
                  {KEPT_WHILE_SENDING}
                </Typography>
              ) : null}
            </Box>
          ) : null}
          {media && (phase.name === 'uploading' || phase.name === 'done') ? (
            <LinearProgress
              variant="determinate"
              value={percent}
              aria-label="Upload progress"
              aria-valuetext={`${percent}%`}
              sx={{ height: 10, borderRadius: 5, mb: 2 }}
            />
          ) : null}
        </Box>
        {phase.name === 'done' ? (
          <Alert severity="success" sx={{ my: 2 }}>
            Evidence uploaded. Taking you to your evidence…
          </Alert>
        ) : null}
        <Stack direction={{ xs: 'column', sm: 'row' }} spacing={1.5} sx={{ mt: 2 }}>
          <Button type="submit" variant="contained" size="large" disabled={busy || place.finding} fullWidth>
            Upload Evidence
          </Button>
          <Button
            variant="outlined"
            size="large"
            disabled={busy}
            onClick={() => void navigate(kind && kind !== 'notes' ? '/evidenceupload' : '/evidence', { state: { kind } })}
            fullWidth
          >
            Back
          </Button>
        </Stack>
      </form>
    </Page>
  );
}
