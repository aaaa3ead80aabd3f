import { queryOptions, useQuery, type QueryClient } from '@tanstack/react-query';
import type { User } from '@portal/contracts';
import { fetchCurrentUser, rememberUser } from '../api/session';

export const CURRENT_USER_KEY = ['current-user'] as const;

/** GET /api/user as a query (also started before the first render, see main.tsx). */
export const currentUserQuery = queryOptions({
  queryKey: CURRENT_USER_KEY,
  queryFn: ({ signal }) => fetchCurrentUser(signal),
  staleTime: 30_000,
});

/**
 * The signed-in user (GET /api/user). `user` is null when nobody is signed in (401);
 * `isPending` is true only before the first answer.
 */
export function useCurrentUser() {
  const query = useQuery(currentUserQuery);
  return { ...query, user: query.data ?? null };
}

/** Puts a user the API just answered into the cache (login, profile save, video watched). */
export function setCurrentUser(client: QueryClient, user: User | null): void {
  client.setQueryData(CURRENT_USER_KEY, user);
  rememberUser(user);
}

/** Asks the server again for the signed-in user and waits for the answer. */
export async function reloadCurrentUser(client: QueryClient): Promise<User | null> {
  await client.invalidateQueries({ queryKey: CURRENT_USER_KEY, exact: true });
  return client.getQueryData<User | null>(CURRENT_USER_KEY) ?? null;
}
