// Sends the outbox: each waiting entry in turn, from the page (tus-js-client, with progress),
// when the app opens, when the network comes back, when the service worker passes on a
// Background Sync, and at once after a capture. One sender per entry across tabs and the
// service worker (Web Locks); the idempotency key makes a repeat harmless anyway.
import { createNote } from '../api/evidence';
import { ApiRequestError } from '../api/http';
import { UploadError, startUpload, type RunningUpload } from '../evidence/upload';
import { OUTBOX_SYNC_TAG, deleteEntry, getEntry, listEntries, putEntry, updateEntry, type OutboxEntry } from './store';

/** Bytes sent of the entries being sent by this page (between the chunks IndexedDB records). */
const progress = new Map<string, number>();
const progressListeners = new Set<() => void>();

function setProgress(id: string, sent: number | null): void {
  if (sent === null) progress.delete(id);
  else progress.set(id, sent);
  for (const listener of progressListeners) listener();
}

export function progressOf(id: string): number | null {
  return progress.get(id) ?? null;
}

export function onProgress(listener: () => void): () => void {
  progressListeners.add(listener);
  return () => progressListeners.delete(listener);
}

/** Done entries stay listed this long (the list on the server shows them from then on). */
export const DONE_KEPT_MS = 60_000;

export interface SendCallbacks {
  onProgress?: (sent: number, total: number) => void;
  onWaitingForNetwork?: (waiting: boolean) => void;
}

export interface SendOutcome {
  itemId: string | null;
}

/** Whether a failure is a refusal for good (the same entry sent again would be refused again). */
export function isRefusal(error: unknown): boolean {
  const status = error instanceof UploadError || error instanceof ApiRequestError ? error.status : 0;
  return status >= 400 && status < 500 && ![401, 403, 408, 409, 423, 429].includes(status);
}

function reasonOf(error: unknown): string {
  if (error instanceof UploadError) return error.message;
  if (error instanceof ApiRequestError) {
    return error.status === 0 ? 'The connection was lost. It will be sent again when the network is back.' : error.message;
  }
  return error instanceof Error ? error.message : String(error);
}

/**
 * Runs `task` holding this entry's lock, unless another tab or the service worker holds it
 * (then answers null at once). Without Web Locks, `task` simply runs.
 */
async function withEntryLock<T>(id: string, task: () => Promise<T>): Promise<T | null> {
  if (typeof navigator === 'undefined' || !navigator.locks) return task();
  return navigator.locks.request(`evidence-outbox:${id}`, { ifAvailable: true }, async (lock) => (lock ? task() : null));
}

/** Entries this page is sending right now, and how to stop each. */
const sending = new Map<string, RunningUpload | null>();

/**
 * Sends one entry and records the outcome in the outbox: done (with its item), failed (with the
 * reason; `refused` when the server said no for good), or back to waiting when the connection
 * went. Answers the outcome; throws the failure.
 */
export async function sendEntry(id: string, callbacks: SendCallbacks = {}): Promise<SendOutcome | null> {
  if (sending.has(id)) return null;
  sending.set(id, null);
  try {
    return await withEntryLock(id, async () => {
      const entry = await getEntry(id);
      if (!entry || entry.state === 'done') return entry ? { itemId: entry.itemId } : null;
      await updateEntry(id, { state: 'uploading', error: null });
      try {
        let itemId: string | null;
        if (!entry.file) {
          const item = await createNote({ title: entry.title, notes: entry.notes, location: entry.location }, entry.id);
          itemId = item.id;
        } else {
          const file =
            entry.file instanceof File
              ? entry.file
              : new File([entry.file], entry.fileName ?? 'evidence', { type: entry.fileType ?? entry.file.type });
          let aborted: () => void = () => undefined;
          const stopped = new Promise<null>((resolve) => (aborted = () => resolve(null)));
          const running = startUpload(
            file,
            { title: entry.title, notes: entry.notes, location: entry.location },
            {
              onProgress: (sent, total) => {
                setProgress(id, sent);
                callbacks.onProgress?.(sent, total);
              },
              onWaitingForNetwork: (waiting) => {
                void updateEntry(id, { state: waiting ? 'waiting' : 'uploading' });
                callbacks.onWaitingForNetwork?.(waiting);
              },
              onUploadUrl: (url) => void updateEntry(id, { uploadUrl: url }),
              onChunkStored: (stored) => void updateEntry(id, { sent: stored }),
            },
            { uploadUrl: entry.uploadUrl, idempotencyKey: entry.id },
          );
          sending.set(id, { done: running.done, abort: () => (running.abort(), aborted()) });
          const outcome = await Promise.race([running.done, stopped]);
          if (!outcome) {
            // Stopped here (the page was left): the entry waits for the next sender.
            await updateEntry(id, { state: 'waiting' });
            return null;
          }
          itemId = outcome.id;
        }
        // The file is on the server: the phone's copy is let go.
        await updateEntry(id, { state: 'done', file: null, sent: entry.size, itemId, error: null });
        return { itemId };
      } catch (error) {
        const offline = typeof navigator !== 'undefined' && navigator.onLine === false;
        await updateEntry(id, {
          state: offline && !isRefusal(error) ? 'waiting' : 'failed',
          refused: isRefusal(error),
          error: reasonOf(error),
        });
        throw error;
      }
    });
  } finally {
    sending.delete(id);
    setProgress(id, null);
  }
}

/** Stops this page's sending of an entry (it stays in the outbox). */
export function stopSending(id: string): void {
  sending.get(id)?.abort();
}

let flushing: Promise<void> | null = null;

/**
 * Sends every entry of this user that waits (or was cut off, or failed without a refusal), oldest
 * first; forgets done entries after a minute. Stops at the first that fails while offline.
 */
export function flushOutbox(userId: string): Promise<void> {
  flushing ??= (async () => {
    try {
      for (const entry of await listEntries(userId)) {
        if (entry.state === 'done') {
          if (Date.now() - entry.updatedAt > DONE_KEPT_MS) await deleteEntry(entry.id);
          continue;
        }
        if (entry.refused || sending.has(entry.id)) continue;
        if (typeof navigator !== 'undefined' && navigator.onLine === false) {
          if (entry.state === 'uploading') await updateEntry(entry.id, { state: 'waiting' });
          continue;
        }
        await sendEntry(entry.id).catch((error: unknown) => console.warn('outbox: sending failed', entry.id, error));
      }
    } finally {
      flushing = null;
    }
  })();
  return flushing;
}

/** The user asked to try a failed entry again. */
export async function retryEntry(userId: string, id: string): Promise<void> {
  await updateEntry(id, { state: 'waiting', refused: false, error: null });
  await flushOutbox(userId);
}

export async function removeEntry(id: string): Promise<void> {
  stopSending(id);
  await deleteEntry(id);
}

/** Why a capture could not be kept on the phone, or null when it was. */
export type KeepProblem = 'storage-full' | null;

/** Keeps a capture in the outbox; answers 'storage-full' when the phone has no room for it. */
export async function keepCapture(entry: OutboxEntry): Promise<KeepProblem> {
  try {
    await putEntry(entry);
  } catch (error) {
    if (error instanceof DOMException && (error.name === 'QuotaExceededError' || error.name === 'UnknownError')) return 'storage-full';
    throw error;
  }
  void askBackgroundSync();
  return null;
}

/** Background Sync, where the browser has it: the service worker sends the outbox when the network is back. */
export async function askBackgroundSync(): Promise<void> {
  try {
    const registration = await navigator.serviceWorker?.getRegistration();
    const sync = (registration as (ServiceWorkerRegistration & { sync?: { register(tag: string): Promise<void> } }) | undefined)?.sync;
    await sync?.register(OUTBOX_SYNC_TAG);
  } catch {
    // not supported or not allowed: the outbox is sent at the next open instead
  }
}

/** The outcome of asking the browser to keep this site's storage (asked at the first capture). */
export type PersistOutcome = 'persisted' | 'refused' | 'unsupported';
const PERSIST_ASKED = 'evidence-outbox.persist';

export async function askPersistentStorage(): Promise<PersistOutcome> {
  const storage = typeof navigator !== 'undefined' ? navigator.storage : undefined;
  if (!storage?.persist) return 'unsupported';
  try {
    if (await storage.persisted()) return 'persisted';
    const granted = await storage.persist();
    localStorage.setItem(PERSIST_ASKED, granted ? 'persisted' : 'refused');
    return granted ? 'persisted' : 'refused';
  } catch {
    return 'unsupported';
  }
}

/** What the browser said at the last ask (null before the first capture). */
export function persistenceAnswer(): PersistOutcome | null {
  const answer = typeof localStorage === 'undefined' ? null : localStorage.getItem(PERSIST_ASKED);
  return answer === 'persisted' || answer === 'refused' ? answer : null;
}

/** Free room for captures, when the browser says (bytes), else null. */
export async function storageRoom(): Promise<number | null> {
  try {
    const estimate = await navigator.storage?.estimate?.();
    return estimate?.quota !== undefined && estimate.usage !== undefined ? estimate.quota - estimate.usage : null;
  } catch {
    return null;
  }
}
