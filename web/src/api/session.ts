// The calls the app shell needs on every page; kept apart from the account calls so that the
// first load does not carry the registration schemas.
import type { LoginRequest, SessionProbe, User } from '@portal/contracts';
import { ApiRequestError, apiRequest } from './http';

/** Kept in localStorage while a logout made offline waits (a copy of the mark in IndexedDB). */
const PENDING_LOGOUT_HINT = 'portal.pending-logout';

/**
 * GET /api/session: the signed-in user, or null when nobody is signed in. It answers 200 to a
 * visitor too, so a visitor's first load logs no failed request in the browser (GET /api/user
 * would answer 401). index.html preloads it.
 */
export async function fetchCurrentUser(signal?: AbortSignal): Promise<User | null> {
  // Someone logged out here without a connection: nobody is signed in until the server has it.
  if (!(await pendingLogoutSettled())) return null;
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
      // Nobody remembered and the phone says it has no network: a visitor, until it is back.
      if (typeof navigator !== 'undefined' && navigator.onLine === false) return null;
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

export async function login(credentials: LoginRequest): Promise<User> {
  // The last person's logout reaches the server before the next person signs in.
  await pendingLogoutSettled();
  return apiRequest<User>('/api/user/login', { method: 'POST', json: credentials });
}

/**
 * POST /api/user/logout. Without an answer (offline), the logout is kept on this phone and sent
 * when the network is back; until then the phone counts as signed out. The page keeps a mark in
 * localStorage (read at every start without loading anything); the service worker keeps its own
 * in IndexedDB (auth/pending-logout.ts) and refuses API requests meanwhile.
 */
export async function logout(): Promise<void> {
  try {
    await apiRequest<{ ok: true }>('/api/user/logout', { method: 'POST' });
  } catch (error) {
    if (!(error instanceof ApiRequestError && error.status === 0)) throw error;
    setPendingLogoutHint(true);
    window.addEventListener('online', () => void pendingLogoutSettled(), { once: true });
    try {
      const { LOGOUT_PENDING_MESSAGE, recordPendingLogout } = await import('../auth/pending-logout');
      await recordPendingLogout();
      navigator.serviceWorker?.controller?.postMessage({ type: LOGOUT_PENDING_MESSAGE });
    } catch (failure) {
      // No service worker to tell (its code is what serves this module offline): the page's mark holds.
      console.warn('the logout was not recorded for the service worker', failure);
    }
  }
}

function pendingLogoutHint(): boolean {
  try {
    return localStorage.getItem(PENDING_LOGOUT_HINT) !== null;
  } catch {
    return false;
  }
}

function setPendingLogoutHint(pending: boolean): void {
  try {
    if (pending) localStorage.setItem(PENDING_LOGOUT_HINT, '1');
    else localStorage.removeItem(PENDING_LOGOUT_HINT);
  } catch {
    // storage unavailable: the service worker's record still holds
  }
}

/**
 * Sends a logout made offline, if this page holds one; answers false while it cannot be sent
 * (the phone then counts as signed out). Runs before every session check and every login, so the
 * next person never signs in before the last person's logout.
 */
async function pendingLogoutSettled(): Promise<boolean> {
  if (!pendingLogoutHint()) return true;
  try {
    await apiRequest<{ ok: true }>('/api/user/logout', { method: 'POST' });
  } catch (error) {
    if (!(error instanceof ApiRequestError && error.status === 401)) {
      rememberUser(null);
      return false;
    }
  }
  try {
    await (await import('../auth/pending-logout')).forgetPendingLogout();
  } catch {
    // nothing recorded there (or no IndexedDB)
  }
  setPendingLogoutHint(false);
  return true;
}
