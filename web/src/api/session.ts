// The calls the app shell needs on every page; kept apart from the account calls so that the
// first load does not carry the registration schemas.
import type { LoginRequest, SessionProbe, User } from '@portal/contracts';
import { apiRequest } from './http';

/**
 * GET /api/session: the signed-in user, or null when nobody is signed in. It answers 200 to a
 * visitor too, so a visitor's first load logs no failed request in the browser (GET /api/user
 * would answer 401). index.html preloads it.
 */
export async function fetchCurrentUser(signal?: AbortSignal): Promise<User | null> {
  const { user } = await apiRequest<SessionProbe>('/api/session', signal ? { signal } : {});
  return user;
}

export function login(credentials: LoginRequest): Promise<User> {
  return apiRequest<User>('/api/user/login', { method: 'POST', json: credentials });
}

export function logout(): Promise<{ ok: true }> {
  return apiRequest<{ ok: true }>('/api/user/logout', { method: 'POST' });
}
