/// <reference lib="webworker" />
// The web app's service worker (built by vite-plugin-pwa with Workbox, web/vite.config.ts):
// - keeps the app shell (index.html, the code, the icons) and the onboarding video with its
//   captions, so the app opens and the briefing plays without a connection;
// - answers every page address with the app while offline;
// - keeps the last event configuration (GET /api/config) for offline starts;
// - waits with a new version until the page says so ("new version" prompt, SKIP_WAITING);
// - on Background Sync, sends the outbox: through an open page if there is one, else itself;
// - holds a logout made offline: until the server has it, no API request leaves this phone with
//   the old session's cookie (auth/pending-logout.ts).
import { CacheableResponsePlugin } from 'workbox-cacheable-response';
import { cacheNames, clientsClaim } from 'workbox-core';
import { RangeRequestsPlugin } from 'workbox-range-requests';
import { NavigationRoute, registerRoute } from 'workbox-routing';
import { CacheFirst, StaleWhileRevalidate } from 'workbox-strategies';
import { cleanupOutdatedCaches, createHandlerBoundToURL, precacheAndRoute } from 'workbox-precaching';
import { CLIENT_ROUTES } from '@portal/contracts/client-routes';
import { LOGOUT_PENDING_MESSAGE, isLogoutPending, settlePendingLogout } from '../auth/pending-logout';
import { sendWithFetch, SendError } from '../outbox/fetch-sender';
import { OUTBOX_SYNC_TAG, listEntries, updateEntry } from '../outbox/store';

declare const self: ServiceWorkerGlobalScope & { __WB_MANIFEST: (string | { url: string; revision: string | null })[] };

// A logout made offline (registered before Workbox's routes, so it sees every request first).
// While one waits, each API request first sends it; if the server cannot be reached, the request
// is refused here instead of leaving with the old session's cookie. /api/config is public and
// answered from its cache. Known false: requests go straight to the network, untouched (uploads
// keep their progress); unknown (the worker just started): asked of IndexedDB.
let logoutPending: boolean | null = null;
void isLogoutPending()
  .then((pending) => (logoutPending ??= pending))
  .catch(() => (logoutPending ??= false));

async function guarded(request: Request): Promise<Response> {
  if (await settlePendingLogout()) {
    logoutPending = false;
    return fetch(request);
  }
  logoutPending = true;
  return Response.error();
}

self.addEventListener('fetch', (event) => {
  if (logoutPending === false) return;
  const url = new URL(event.request.url);
  if (url.origin !== self.location.origin || !url.pathname.startsWith('/api/') || url.pathname === '/api/config') return;
  event.respondWith(guarded(event.request));
});

// The onboarding video from the precache, answering the range requests a video element makes
// (registered before the precache's own route, which would answer them with the whole file).
registerRoute(
  ({ url }) => url.origin === self.location.origin && url.pathname.startsWith('/onboarding/') && /\.(mp4|webm)$/.test(url.pathname),
  new CacheFirst({
    cacheName: cacheNames.precache,
    plugins: [new CacheableResponsePlugin({ statuses: [200] }), new RangeRequestsPlugin()],
    matchOptions: { ignoreSearch: true, ignoreVary: true },
  }),
);

precacheAndRoute(self.__WB_MANIFEST);
cleanupOutdatedCaches();

// The app's page addresses are the app (exactly those: any other address goes to the gateway,
// which answers the app with a 404 status, as without a service worker).
const escape = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
registerRoute(
  new NavigationRoute(createHandlerBoundToURL('/index.html'), {
    allowlist: CLIENT_ROUTES.map((route) => new RegExp(`^${escape(route)}(?:\\?.*)?$`)),
  }),
);

// The event's words and links: the last answer while offline.
registerRoute(
  ({ url }) => url.origin === self.location.origin && url.pathname === '/api/config',
  new StaleWhileRevalidate({ cacheName: 'portal-config' }),
);

self.addEventListener('message', (event) => {
  const type = (event.data as { type?: unknown } | null)?.type;
  if (type === 'SKIP_WAITING') void self.skipWaiting();
  if (type === LOGOUT_PENDING_MESSAGE) logoutPending = true;
});
// A new version that took over (after the participant said yes) controls the open pages at once.
clientsClaim();

interface SyncEvent extends ExtendableEvent {
  readonly tag: string;
  readonly lastChance: boolean;
}

self.addEventListener('sync', (event) => {
  const sync = event as SyncEvent;
  if (sync.tag === OUTBOX_SYNC_TAG) sync.waitUntil(sendOutbox());
});

/** Who is signed in on this browser (the outbox sends only their captures), or null. */
async function signedInUser(): Promise<string | null> {
  // Nobody, while a logout made offline has not reached the server.
  if (!(await settlePendingLogout())) return null;
  const response = await fetch('/api/session', { credentials: 'same-origin', headers: { accept: 'application/json' } });
  if (!response.ok) throw new SendError(`The server answered ${response.status}`, response.status);
  const { user } = (await response.json()) as { user: { id: string } | null };
  return user?.id ?? null;
}

async function sendOutbox(): Promise<void> {
  const windows = await self.clients.matchAll({ type: 'window' });
  if (windows.length > 0) {
    // An open page sends it (with its progress on screen).
    for (const client of windows) client.postMessage({ type: 'outbox-sync' });
    return;
  }
  const userId = await signedInUser();
  if (!userId) return;
  let failed: unknown = null;
  for (const entry of await listEntries(userId)) {
    if (entry.state === 'done' || entry.refused) continue;
    await navigator.locks.request(`evidence-outbox:${entry.id}`, { ifAvailable: true }, async (lock) => {
      if (!lock) return;
      await updateEntry(entry.id, { state: 'uploading', error: null });
      try {
        const itemId = await sendWithFetch(entry, {
          onUploadUrl: (url) => updateEntry(entry.id, { uploadUrl: url }).then(() => undefined),
          onStored: (bytes) => updateEntry(entry.id, { sent: bytes }).then(() => undefined),
        });
        await updateEntry(entry.id, { state: 'done', file: null, sent: entry.size, itemId, error: null });
      } catch (error) {
        const refused = error instanceof SendError && error.refused;
        await updateEntry(entry.id, {
          state: refused ? 'failed' : 'waiting',
          refused,
          error: error instanceof Error ? error.message : String(error),
        });
        if (!refused) failed = error;
      }
    });
  }
  // The browser tries the sync again later when something is still waiting.
  if (failed) throw failed instanceof Error ? failed : new Error(String(failed));
}
