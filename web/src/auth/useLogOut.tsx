import { Suspense, lazy, useState, type ReactNode } from 'react';
import { useNavigate } from 'react-router';
import { useSignOut } from './session';
import { useCurrentUser } from './useCurrentUser';

const WaitingEvidenceDialog = lazy(() => import('./WaitingEvidenceDialog'));

/** How many captures of this user wait in the outbox (the outbox's code loads only now). */
async function waitingCaptures(userId: string): Promise<number> {
  if (typeof indexedDB === 'undefined') return 0;
  try {
    const { listEntries } = await import('../outbox/store');
    return (await listEntries(userId)).filter((entry) => entry.state !== 'done').length;
  } catch {
    return 0;
  }
}

/**
 * Log Out as the menu and the profile offer it: when captures of this participant still wait in
 * the outbox, it first says what becomes of them (they stay on this phone, unsent, until the
 * participant signs in here again). Answers the action and the dialog to render.
 */
export function useLogOut(): { logOut: () => void; warning: ReactNode } {
  const { user } = useCurrentUser();
  const signOut = useSignOut();
  const navigate = useNavigate();
  const [waiting, setWaiting] = useState(0);

  const leave = () => {
    setWaiting(0);
    void signOut().then(() => navigate('/'));
  };
  const logOut = () => {
    if (!user) return leave();
    void waitingCaptures(user.id).then((count) => (count > 0 ? setWaiting(count) : leave()));
  };
  const warning =
    waiting > 0 ? (
      <Suspense fallback={null}>
        <WaitingEvidenceDialog count={waiting} onCancel={() => setWaiting(0)} onLogOut={leave} />
      </Suspense>
    ) : null;
  return { logOut, warning };
}
