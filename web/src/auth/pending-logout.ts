// A logout made without a connection, kept on this phone until the server has it. Logging out
// must end the session on a phone shared at the venue even offline: the session cookie is
// HttpOnly, so the app cannot drop it itself, and the next person would otherwise be signed in
// as the last one when the network is back. Until the server has the logout, the app treats
// the phone as signed out and the service worker refuses every API request that would carry the
// old cookie (sw.ts). Shared by the page and the service worker: nothing here needs the DOM.
import { openDB, type DBSchema, type IDBPDatabase } from 'idb';

interface SessionSchema extends DBSchema {
  state: { key: string; value: { since: number } };
}

const DB_NAME = 'portal-session';
const PENDING_LOGOUT = 'pending-logout';
/** The message a page sends its service worker when it records a logout for later. */
export const LOGOUT_PENDING_MESSAGE = 'logout-pending';

let database: Promise<IDBPDatabase<SessionSchema>> | null = null;

function db(): Promise<IDBPDatabase<SessionSchema>> {
  database ??= openDB<SessionSchema>(DB_NAME, 1, {
    upgrade(upgrading) {
      upgrading.createObjectStore('state');
    },
  });
  return database;
}

/** Records that the signed-in person logged out while the server could not be told. */
export async function recordPendingLogout(): Promise<void> {
  await (await db()).put('state', { since: Date.now() }, PENDING_LOGOUT);
}

export async function isLogoutPending(): Promise<boolean> {
  return (await (await db()).get('state', PENDING_LOGOUT)) !== undefined;
}

/** The server has the logout (the page sent it). */
export async function forgetPendingLogout(): Promise<void> {
  await (await db()).delete('state', PENDING_LOGOUT);
}

let settling: Promise<boolean> | null = null;

/**
 * Sends a recorded logout to the server (which ends the session and clears the cookie).
 * Answers true when no logout is pending any more, false while the server cannot be reached.
 */
export function settlePendingLogout(): Promise<boolean> {
  settling ??= (async () => {
    try {
      if (!(await isLogoutPending())) return true;
      let response: Response;
      try {
        response = await fetch('/api/user/logout', { method: 'POST', credentials: 'same-origin', headers: { accept: 'application/json' } });
      } catch {
        return false;
      }
      // 401: no session left to end. Anything else (a server error, a limit) is tried again later.
      if (!response.ok && response.status !== 401) return false;
      await forgetPendingLogout();
      return true;
    } finally {
      settling = null;
    }
  })();
  return settling;
}
