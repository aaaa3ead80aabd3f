import AddIcon from '@mui/icons-material/Add';
import EditNoteIcon from '@mui/icons-material/EditNote';
import MicIcon from '@mui/icons-material/Mic';
import PhotoCameraIcon from '@mui/icons-material/PhotoCamera';
import Backdrop from '@mui/material/Backdrop';
import SpeedDial from '@mui/material/SpeedDial';
import SpeedDialAction from '@mui/material/SpeedDialAction';
import { useState, type ReactNode } from 'react';
import { useNavigate } from 'react-router';
import { chooseKind, type EvidenceKind } from '../../evidence/selection';

const ACTIONS: { kind: EvidenceKind; label: string; icon: ReactNode }[] = [
  { kind: 'camera', label: 'Camera', icon: <PhotoCameraIcon /> },
  { kind: 'audio', label: 'Audio', icon: <MicIcon /> },
  { kind: 'notes', label: 'Notes', icon: <EditNoteIcon /> },
];

/** The red plus button: camera and audio go to /evidenceupload, notes straight to /evidence-details. */
export function AddEvidenceButton() {
  const navigate = useNavigate();
  const [open, setOpen] = useState(false);

  const choose = (kind: EvidenceKind) => {
    setOpen(false);
    chooseKind(kind);
    void navigate(kind === 'notes' ? '/evidence-details' : '/evidenceupload', { state: { kind } });
  };

  return (
    <>
      <Backdrop open={open} onClick={() => setOpen(false)} sx={{ zIndex: (theme) => theme.zIndex.speedDial - 1 }} />
      <SpeedDial
        ariaLabel="Add evidence"
        open={open}
        onOpen={(_event, reason) => {
          // Opened by a tap, a click or Enter/Space only ('toggle'): not by the pointer passing
          // over it (phones have no hover), and not by focus, which a tap also gives — on a busy
          // phone the focus opened it first and the tap's click then closed it again.
          if (reason === 'toggle') setOpen(true);
        }}
        onClose={(_event, reason) => {
          if (reason !== 'mouseLeave') setOpen(false);
        }}
        icon={<AddIcon />}
        FabProps={{ color: 'secondary' }}
        sx={{ position: 'fixed', right: { xs: 16, sm: 32 }, bottom: { xs: 16, sm: 32 } }}
      >
        {ACTIONS.map((action) => (
          <SpeedDialAction
            key={action.kind}
            icon={action.icon}
            slotProps={{ tooltip: { title: action.label, open: true } }}
            onClick={() => choose(action.kind)}
          />
        ))}
      </SpeedDial>
    </>
  );
}
