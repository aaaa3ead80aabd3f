import type { ReactNode } from 'react';
import { Navigate } from 'react-router';
import { LoginPage } from '../app/pages';
import { PageLoading } from '../components/PageLoading';
import { useCurrentUser } from './useCurrentUser';

/** A protected page: shown to a signed-in user; anyone else sees the login page in its place. */
export function RequireUser({ children }: { children: ReactNode }) {
  const { user, isPending } = useCurrentUser();
  if (isPending) return <PageLoading />;
  return user ? children : <LoginPage />;
}

/** Login and registration: a signed-in user is sent on (to /home or /user). */
export function RedirectIfSignedIn({ to, children }: { to: string; children: ReactNode }) {
  const { user, isPending } = useCurrentUser();
  if (isPending) return <PageLoading />;
  return user ? <Navigate to={to} replace /> : children;
}

/**
 * /home, /home-validate and the evidence pages: a participant who has not watched the video goes
 * to /user first, where the onboarding dialog is.
 */
export function RequireVideoWatched({ children }: { children: ReactNode }) {
  const { user, isPending } = useCurrentUser();
  if (isPending) return <PageLoading />;
  return user && !user.video_watched ? <Navigate to="/user" replace /> : children;
}
