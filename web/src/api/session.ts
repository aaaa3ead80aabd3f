// The calls the app shell needs on every page; kept apart from the account calls so that the
// first load does not carry the registration schemas.
import type { LoginRequest, User } from '@portal/contracts';
import { ApiRequestError, apiRequest } from './http';

/** GET /api/user: the signed-in user, or null when nobody is signed in. */
export async function fetchCurrentUser(signal?: AbortSignal): Promise<User | null> {
  try {
    return await apiRequest<User>('/api/user', signal ? { signal } : {});
  } catch (error) {
    if (error instanceof ApiRequestError && error.status === 401) return null;
    throw error;
  }
}

export function login(credentials: LoginRequest): Promise<User> {
  return apiRequest<User>('/api/user/login', { method: 'POST', json: credentials });
}

export function logout(): Promise<{ ok: true }> {
  return apiRequest<{ ok: true }>('/api/user/logout', { method: 'POST' });
}
