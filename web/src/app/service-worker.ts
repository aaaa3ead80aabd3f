// Registers the service worker (web/src/sw/sw.ts) once the page has loaded, and offers a new
// version when one is waiting: the participant says when the app reloads, never in the middle
// of a capture. Hand-written rather than workbox-window: it is all the first load carries.

/** Called when a new version is ready; `apply` switches to it and reloads. */
export type UpdateOffer = (apply: () => void) => void;

/** Messages the service worker sends to the pages (the outbox's Background Sync). */
export const SW_MESSAGES = { outboxSync: 'outbox-sync' } as const;

const HOUR = 60 * 60 * 1000;

export function registerServiceWorker(offer: UpdateOffer): void {
  if (!('serviceWorker' in navigator) || import.meta.env.DEV) return;
  let switching = false;
  navigator.serviceWorker.addEventListener('controllerchange', () => {
    // The first installation also takes control (clientsClaim): only a version asked for reloads.
    if (switching) window.location.reload();
  });
  const offerWaiting = (worker: ServiceWorker) =>
    offer(() => {
      switching = true;
      worker.postMessage({ type: 'SKIP_WAITING' });
    });
  const register = () => {
    navigator.serviceWorker
      .register('/sw.js', { scope: '/' })
      .then((registration: ServiceWorkerRegistration | undefined) => {
        // (Automation that blocks service workers answers nothing.)
        if (!registration) return;
        if (registration.waiting && navigator.serviceWorker.controller) offerWaiting(registration.waiting);
        registration.addEventListener('updatefound', () => {
          const installing = registration.installing;
          installing?.addEventListener('statechange', () => {
            if (installing.state === 'installed' && navigator.serviceWorker.controller) offerWaiting(installing);
          });
        });
        // An app left open for days still hears of new releases.
        window.setInterval(() => void registration.update().catch(() => undefined), HOUR);
      })
      .catch((error: unknown) => console.warn('the service worker was not registered', error));
  };
  if (document.readyState === 'complete') register();
  else window.addEventListener('load', register, { once: true });
}
