// The calls the app shell needs on every page; kept apart from the account calls so that the
// first load does not carry the registration schemas.
import type { LoginRequest, SessionProbe, User } from '@portal/contracts';
import { ApiRequestError, apiRequest } from './http';

/**
 * GET /api/session: the signed-in user, or null when nobody is signed in. It answers 200 to a
 * visitor too, so a visitor's first load logs no failed request in the browser (GET /api/user
 * would answer 401). index.html preloads it.
 */
export async function fetchCurrentUser(signal?: AbortSignal): Promise<User | null> {
  try {
    const { user } = await apiRequest<SessionProbe>('/api/session', signal ? { signal } : {});
    rememberUser(user);
    return user;
  } catch (error) {
    // Offline (no answer at all): the app opens for whoever was signed in last, so that a
    // participant can capture evidence into the outbox; the server decides when it is sent.
    if (error instanceof ApiRequestError && error.status === 0) {
      const remembered = lastUser();
      if (remembered) return remembered;
    }
    throw error;
  }
}

const LAST_USER = 'portal.last-user';

/** Kept on this device for offline starts; forgotten at logout (null). */
export function rememberUser(user: User | null): void {
  try {
    if (user) localStorage.setItem(LAST_USER, JSON.stringify(user));
    else localStorage.removeItem(LAST_USER);
  } catch {
    // storage unavailable (private mode): offline starts show the login page
  }
}

function lastUser(): User | null {
  try {
    const stored = localStorage.getItem(LAST_USER);
    return stored ? (JSON.parse(stored) as User) : null;
  } catch {
    return null;
  }
}

export function login(credentials: LoginRequest): Promise<User> {
  return apiRequest<User>('/api/user/login', { method: 'POST', json: credentials });
}

export function logout(): Promise<{ ok: true }> {
  return apiRequest<{ ok: true }>('/api/user/logout', { method: 'POST' });
}
