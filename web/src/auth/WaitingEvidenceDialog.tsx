import { ConfirmDialog } from '../evidence/ConfirmDialog';

/** Said at logout when captures of the participant have not reached the server yet. */
export function waitingEvidenceText(count: number): string {
  const what = count === 1 ? '1 piece of evidence has' : `${count} pieces of evidence have`;
  return `${what} not been uploaded yet. It stays on this phone and is uploaded only when you log in here again with a connection. Log out anyway?`;
}

export default function WaitingEvidenceDialog({
  count,
  onCancel,
  onLogOut,
}: {
  count: number;
  onCancel: () => void;
  onLogOut: () => void;
}) {
  return (
    <ConfirmDialog open title="Evidence still waiting" confirmLabel="Log Out" onCancel={onCancel} onConfirm={onLogOut}>
      {waitingEvidenceText(count)}
    </ConfirmDialog>
  );
}
