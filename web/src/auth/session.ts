import { useQueryClient } from '@tanstack/react-query';
import { useCallback } from 'react';
import { MESSAGES, type LoginRequest, type User } from '@portal/contracts';
import { ApiRequestError } from '../api/http';
import { fetchCurrentUser, login, logout } from '../api/session';
import { setCurrentUser } from './useCurrentUser';

/** What the login page says when the attempts limit answered 429, with when to try again. */
export function tooManyAttemptsMessage(retryAfterSeconds: number | null): string {
  if (retryAfterSeconds === null) return 'Too many attempts. Please wait a few minutes and try again.';
  const minutes = Math.max(1, Math.ceil(retryAfterSeconds / 60));
  return `Too many attempts. Please try again in ${minutes} ${minutes === 1 ? 'minute' : 'minutes'}.`;
}

/** The login error texts of SPEC section 8 for a failed sign-in (and the attempts limit's). */
export function loginErrorMessage(error: unknown): string {
  if (error instanceof ApiRequestError && error.status === 401) return MESSAGES.loginMismatch;
  if (error instanceof ApiRequestError && error.status === 429) return tooManyAttemptsMessage(error.retryAfterSeconds);
  if (error instanceof ApiRequestError && error.status === 400 && error.message === MESSAGES.loginInput) return MESSAGES.loginInput;
  return MESSAGES.loginNoServer;
}

/** Signs in, then fetches the signed-in user (as the original did) and caches it. */
export function useSignIn(): (credentials: LoginRequest) => Promise<User> {
  const client = useQueryClient();
  return useCallback(
    async (credentials: LoginRequest) => {
      await login(credentials);
      const user = await fetchCurrentUser();
      if (!user) throw new ApiRequestError(500, 'internal', 'The session was not kept after login');
      setCurrentUser(client, user);
      return user;
    },
    [client],
  );
}

/** Ends the session on the server and forgets the user here, whatever the server said. */
export function useSignOut(): () => Promise<void> {
  const client = useQueryClient();
  return useCallback(async () => {
    try {
      await logout();
    } catch (error) {
      console.warn('logout failed', error);
    } finally {
      setCurrentUser(client, null);
      client.removeQueries({ predicate: (query) => query.queryKey[0] !== 'public-config' && query.queryKey[0] !== 'current-user' });
    }
  }, [client]);
}
