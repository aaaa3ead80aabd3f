import { useEffect } from 'react';
import { useCurrentUser } from '../auth/useCurrentUser';
import { SW_MESSAGES } from '../app/service-worker';

/**
 * Sends what waits in the outbox of the signed-in participant: when the app opens, when the
 * network comes back and when the service worker passes on a Background Sync. The outbox's code
 * (tus-js-client, IndexedDB) loads only then, in a chunk of its own.
 */
export function OutboxAutoSend() {
  const { user } = useCurrentUser();
  const userId = user && user.video_watched ? user.id : null;
  useEffect(() => {
    if (!userId || typeof indexedDB === 'undefined') return;
    const flush = () => {
      void import('./runner')
        .then(({ flushOutbox }) => flushOutbox(userId))
        .catch((error: unknown) => console.warn('outbox: not sent', error));
    };
    const onMessage = (event: MessageEvent) => {
      if ((event.data as { type?: unknown } | null)?.type === SW_MESSAGES.outboxSync) flush();
    };
    // After the page's first work, not in its way.
    const idle = window.setTimeout(flush, 1500);
    window.addEventListener('online', flush);
    navigator.serviceWorker?.addEventListener('message', onMessage);
    return () => {
      window.clearTimeout(idle);
      window.removeEventListener('online', flush);
      navigator.serviceWorker?.removeEventListener('message', onMessage);
    };
  }, [userId]);
  return null;
}
