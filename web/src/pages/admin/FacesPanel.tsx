import Alert from '@mui/material/Alert';
import Box from '@mui/material/Box';
import Button from '@mui/material/Button';
import FormControlLabel from '@mui/material/FormControlLabel';
import List from '@mui/material/List';
import ListItem from '@mui/material/ListItem';
import ListItemText from '@mui/material/ListItemText';
import Stack from '@mui/material/Stack';
import Switch from '@mui/material/Switch';
import TextField from '@mui/material/TextField';
import Typography from '@mui/material/Typography';
import { useQuery, useQueryClient } from '@tanstack/react-query';
import { useRef, useState, type PointerEvent as ReactPointerEvent } from 'react';
import { faceBoxesAt, type EditFacesRequest, type Evidence, type EvidenceFaces, type FaceBox, type FaceRegion } from '@portal/contracts';
import { editFaces, fetchFaces, setFacesConsent } from '../../api/admin';
import { messageOf } from '../../api/http';
import { ConfirmDialog } from '../../evidence/ConfirmDialog';
import { DETAIL_MEDIA_MAX_HEIGHT } from '../../evidence/EvidenceMedia';

interface FacesPanelProps {
  item: Evidence;
  /** Called after a change, so that the dialog shows the item as it is now. */
  onChanged: () => void;
}

const percent = (value: number) => `${(value * 100).toFixed(2)}%`;
const clamp = (value: number) => Math.min(1, Math.max(0, value));
const seconds = (value: number) => `${Math.floor(value / 60)}:${String(Math.floor(value % 60)).padStart(2, '0')}`;

/** What the public is given, in words. */
function publicCopyText(faces: EvidenceFaces): string {
  if (faces.check === 'pending') return 'Looking for faces… The public sees nothing of this item until the check is done.';
  if (faces.check === 'failed' && !faces.consent)
    return 'The faces could not be looked for (the video could not be converted): the public sees nothing of this item unless consent is on record.';
  if (faces.consent) return 'Faces may be shown (consent on record): the public sees the picture as it is.';
  if (faces.public_copy === 'pending') return 'The blurred copy is being made: the public sees nothing of this item until it is ready.';
  if (faces.public_copy === 'blurred') {
    const count = faces.regions.filter((region) => !region.removed).length;
    return `${count} ${count === 1 ? 'face is' : 'faces are'} blurred in the public copy.`;
  }
  if (faces.check === 'off') return 'Faces were not looked for (face blur was off): the public sees the picture as it is.';
  return 'No face to hide: the public sees the picture as it is.';
}

/** What the button of a region does: a detected face is shown (no face to hide), an added box removed; either hidden again. */
function actionLabel(region: FaceRegion): string {
  if (region.removed) return 'Hide again';
  return region.source === 'added' ? 'Remove box' : 'Not a face to hide';
}

function regionLabel(region: FaceRegion, index: number, video: boolean): string {
  const who =
    region.source === 'added'
      ? `Box ${index + 1}, added by an administrator${video ? ', for the whole video' : ''}`
      : `Face ${index + 1}, found by the detector (${Math.round((region.score ?? 0) * 100)} %)`;
  const when =
    video && region.source === 'detected' && region.track.length > 0
      ? `, seen ${seconds(region.track[0]!.t)}–${seconds(region.track[region.track.length - 1]!.t)}`
      : '';
  return `${who}${when}${region.removed ? (region.source === 'added' ? ' — removed' : ' — shown (not a face to hide)') : ''}`;
}

/**
 * An administrator's view of the faces of a photo or video, on the original picture (never the
 * blurred copy): the boxes drawn over it (for a video, those of the moment shown), each one
 * removable (a poster on a wall) or hidden again; a box added by dragging over the picture or,
 * from the keyboard, by its position in percent; and consent on record that the faces may be
 * shown. Every change is sent at once; the public copy is made again by the media worker.
 */
export function FacesPanel({ item, onChanged }: FacesPanelProps) {
  const client = useQueryClient();
  const video = item.media_type === 3;
  const query = useQuery({
    queryKey: ['evidence-faces', item.id],
    queryFn: ({ signal }) => fetchFaces(item.id, signal),
    // While the worker looks or blurs, the answer changes by itself.
    refetchInterval: (current) => (current.state.data?.check === 'pending' || current.state.data?.public_copy === 'pending' ? 2000 : false),
  });
  const faces = query.data;
  const [problem, setProblem] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const [drawing, setDrawing] = useState(false);
  const [draft, setDraft] = useState<FaceBox | null>(null);
  const [typed, setTyped] = useState({ x: '40', y: '30', w: '20', h: '25' });
  const [consentDialog, setConsentDialog] = useState(false);
  const [note, setNote] = useState('');
  const [time, setTime] = useState(0);
  const start = useRef<{ x: number; y: number } | null>(null);
  const layer = useRef<HTMLDivElement | null>(null);

  const after = (updated: EvidenceFaces) => {
    client.setQueryData(['evidence-faces', item.id], updated);
    onChanged();
  };
  const change = async (request: Omit<EditFacesRequest, 'base'>) => {
    if (!faces) return;
    setBusy(true);
    setProblem(null);
    try {
      after(await editFaces(item.id, { base: faces.version, ...request }));
    } catch (error) {
      console.warn('faces change failed', error);
      setProblem(messageOf(error, 'The change could not be saved. Please try again.'));
      void query.refetch();
    } finally {
      setBusy(false);
    }
  };
  const consent = async (value: boolean) => {
    setBusy(true);
    setProblem(null);
    try {
      after(await setFacesConsent(item.id, value, value ? note.trim() || undefined : undefined));
      setConsentDialog(false);
      setNote('');
    } catch (error) {
      console.warn('faces consent failed', error);
      setProblem(messageOf(error, 'The consent could not be recorded. Please try again.'));
    } finally {
      setBusy(false);
    }
  };

  // Dragging over the picture draws a box (in fractions of the picture).
  const pointAt = (event: ReactPointerEvent) => {
    const rect = layer.current!.getBoundingClientRect();
    return { x: clamp((event.clientX - rect.left) / rect.width), y: clamp((event.clientY - rect.top) / rect.height) };
  };
  const boxFrom = (a: { x: number; y: number }, b: { x: number; y: number }): FaceBox => ({
    x: Math.min(a.x, b.x),
    y: Math.min(a.y, b.y),
    w: Math.abs(a.x - b.x),
    h: Math.abs(a.y - b.y),
  });
  const onPointerDown = (event: ReactPointerEvent) => {
    if (!drawing) return;
    event.preventDefault();
    layer.current!.setPointerCapture(event.pointerId);
    start.current = pointAt(event);
    setDraft(boxFrom(start.current, start.current));
  };
  const onPointerMove = (event: ReactPointerEvent) => {
    if (drawing && start.current) setDraft(boxFrom(start.current, pointAt(event)));
  };
  const onPointerUp = (event: ReactPointerEvent) => {
    if (!drawing || !start.current) return;
    const box = boxFrom(start.current, pointAt(event));
    start.current = null;
    setDraft(null);
    // A click without a drag draws nothing.
    if (box.w < 0.01 || box.h < 0.01) return;
    setDrawing(false);
    void change({ added: [box] });
  };

  const typedBox = (): FaceBox | null => {
    const [x, y, w, h] = [typed.x, typed.y, typed.w, typed.h].map((value) => Number(value) / 100) as [number, number, number, number];
    if (![x, y, w, h].every((value) => Number.isFinite(value))) return null;
    if (x < 0 || y < 0 || w <= 0 || h <= 0 || x + w > 1 || y + h > 1) return null;
    return { x, y, w, h };
  };

  if (!item.aws_url) return null;
  const regions = faces?.regions ?? [];
  const mediaStyle = { display: 'block', maxWidth: '100%', maxHeight: DETAIL_MEDIA_MAX_HEIGHT, borderRadius: '8px' } as const;

  return (
    <Stack spacing={1.5}>
      <Box sx={{ position: 'relative', display: 'inline-block', alignSelf: 'center', maxWidth: '100%' }}>
        {video ? (
          <video
            src={item.aws_url}
            poster={item.poster_url ?? undefined}
            controls={!drawing}
            playsInline
            preload="metadata"
            aria-label={`Video: ${item.title} (as recorded, faces not blurred)`}
            onTimeUpdate={(event) => setTime(event.currentTarget.currentTime)}
            onSeeked={(event) => setTime(event.currentTarget.currentTime)}
            style={{ ...mediaStyle, background: '#000' }}
          />
        ) : (
          <img src={item.aws_url} alt={`${item.title} (as taken, faces not blurred)`} style={mediaStyle} />
        )}
        <Box
          ref={layer}
          data-testid="face-boxes"
          onPointerDown={onPointerDown}
          onPointerMove={onPointerMove}
          onPointerUp={onPointerUp}
          sx={{
            position: 'absolute',
            inset: 0,
            // Only while drawing does the layer take the pointer (the video's controls stay usable otherwise).
            pointerEvents: drawing ? 'auto' : 'none',
            cursor: drawing ? 'crosshair' : 'default',
            touchAction: drawing ? 'none' : 'auto',
          }}
        >
          {regions.map((region, index) => {
            // The region's box at the moment shown (a video's face is drawn only while it is in the picture).
            const box = faceBoxesAt([{ ...region, removed: false }], video ? time : 0, video ? (faces?.interval ?? null) : null)[0];
            if (!box) return null;
            return (
              <Box
                key={region.id}
                data-face={region.id}
                aria-hidden="true"
                sx={{
                  position: 'absolute',
                  left: percent(box.x),
                  top: percent(box.y),
                  width: percent(box.w),
                  height: percent(box.h),
                  border: region.removed ? '2px dashed #bbb' : '3px solid #ff1744',
                  boxShadow: '0 0 0 1px rgba(0,0,0,0.6)',
                  borderRadius: '4px',
                }}
              >
                <Typography
                  component="span"
                  sx={{
                    position: 'absolute',
                    top: -22,
                    left: 0,
                    px: 0.5,
                    fontSize: 12,
                    color: '#fff',
                    bgcolor: region.removed ? '#555' : '#b2102f',
                  }}
                >
                  {index + 1}
                </Typography>
              </Box>
            );
          })}
          {draft ? (
            <Box
              sx={{
                position: 'absolute',
                left: percent(draft.x),
                top: percent(draft.y),
                width: percent(draft.w),
                height: percent(draft.h),
                border: '2px dashed #ffea00',
              }}
            />
          ) : null}
        </Box>
      </Box>

      <Typography role="status" variant="body2">
        {faces ? publicCopyText(faces) : query.isError ? 'The faces could not be loaded.' : 'Loading the faces…'}
      </Typography>
      {problem ? <Alert severity="error">{problem}</Alert> : null}

      {faces && faces.check !== 'pending' ? (
        <>
          {regions.length > 0 ? (
            <List dense aria-label="Faces in this picture" sx={{ py: 0 }}>
              {regions.map((region, index) => (
                <ListItem
                  key={region.id}
                  disableGutters
                  secondaryAction={
                    <Button
                      size="small"
                      disabled={busy}
                      onClick={() => void change(region.removed ? { restored: [region.id] } : { removed: [region.id] })}
                      aria-label={`${actionLabel(region)}: ${region.source === 'added' ? 'box' : 'face'} ${index + 1}`}
                    >
                      {actionLabel(region)}
                    </Button>
                  }
                >
                  <ListItemText primary={regionLabel(region, index, video)} sx={{ pr: 18, overflowWrap: 'anywhere' }} />
                </ListItem>
              ))}
            </List>
          ) : null}

          <Stack direction="row" sx={{ flexWrap: 'wrap', gap: 1, alignItems: 'center' }}>
            <Button
              variant={drawing ? 'contained' : 'outlined'}
              size="small"
              disabled={busy}
              onClick={() => setDrawing(!drawing)}
              aria-pressed={drawing}
            >
              {drawing ? 'Drag over the picture… (Cancel)' : 'Draw a box to hide'}
            </Button>
          </Stack>
          <Typography variant="body2" color="text.secondary">
            Or add a box by its position, in percent of the picture (on a video it covers the whole video):
          </Typography>
          <Box
            component="form"
            aria-label="Add a box by its position"
            onSubmit={(event) => {
              event.preventDefault();
              const box = typedBox();
              if (!box) {
                setProblem('The box must lie inside the picture: left + width and top + height at most 100 %.');
                return;
              }
              void change({ added: [box] });
            }}
            sx={{ display: 'flex', flexWrap: 'wrap', gap: 1, alignItems: 'center' }}
          >
            {(
              [
                ['x', 'Left %'],
                ['y', 'Top %'],
                ['w', 'Width %'],
                ['h', 'Height %'],
              ] as const
            ).map(([field, label]) => (
              <TextField
                key={field}
                label={label}
                size="small"
                type="number"
                value={typed[field]}
                onChange={(event) => setTyped({ ...typed, [field]: event.target.value })}
                slotProps={{ htmlInput: { min: 0, max: 100, step: 1 } }}
                sx={{ width: 96 }}
              />
            ))}
            <Button type="submit" size="small" variant="outlined" disabled={busy}>
              Add box
            </Button>
          </Box>

          <FormControlLabel
            control={
              <Switch
                checked={faces.consent}
                disabled={busy}
                onChange={() => (faces.consent ? void consent(false) : setConsentDialog(true))}
              />
            }
            label="Faces may be shown (consent on record)"
          />
        </>
      ) : null}

      <ConfirmDialog
        open={consentDialog}
        title="Faces may be shown?"
        busy={busy}
        confirmLabel="Record consent"
        onCancel={() => setConsentDialog(false)}
        onConfirm={() => void consent(true)}
      >
        <Typography sx={{ mb: 2 }}>
          Only when the people shown agreed to be seen: the public archive will show this item with faces unblurred. Your name and the time
          go into the activity log.
        </Typography>
        <TextField
          label="Where the consent is on record (optional)"
          fullWidth
          value={note}
          onChange={(event) => setNote(event.target.value)}
          slotProps={{ htmlInput: { maxLength: 500 } }}
        />
      </ConfirmDialog>
    </Stack>
  );
}
