// The outbox: evidence captured on this phone and not yet on the server, kept in IndexedDB
// (through idb, a thin promise wrapper) so that it survives a lost connection, a reload and a
// closed browser. Shared by the page and the service worker (Background Sync): nothing here
// needs the DOM.
import { openDB, type DBSchema, type IDBPDatabase } from 'idb';

/** waiting: for the network (or its turn); uploading: being sent; failed: refused or stuck; done: on the server. */
export type OutboxState = 'waiting' | 'uploading' | 'failed' | 'done';

export interface OutboxEntry {
  /** Also the idempotency key the server checks: one capture makes one item, however often sent. */
  id: string;
  /** Whose capture it is: only their session sends it. */
  userId: string;
  createdAt: number;
  updatedAt: number;
  title: string;
  notes: string;
  location: string | null;
  /** The media (a photo, video or recording); null for a note, and once it is on the server. */
  file: Blob | null;
  fileName: string | null;
  fileType: string | null;
  /** The file's size in bytes (0 for a note). */
  size: number;
  state: OutboxState;
  /** Bytes the server is known to have. */
  sent: number;
  /** Why it failed, in the server's words when it answered. */
  error: string | null;
  /** True when the server refused it (too large, not media): it is not sent again by itself. */
  refused: boolean;
  /** The resumable upload's address once created: a reload resumes there. */
  uploadUrl: string | null;
  /** The item it became. */
  itemId: string | null;
}

interface OutboxSchema extends DBSchema {
  entries: { key: string; value: OutboxEntry; indexes: { byUser: string } };
}

const DB_NAME = 'evidence-outbox';
/** Every change is announced here, to the pages of this site and its service worker. */
export const OUTBOX_CHANNEL = 'evidence-outbox';
/** The Background Sync tag under which the service worker is asked to send the outbox. */
export const OUTBOX_SYNC_TAG = 'evidence-outbox';

let database: Promise<IDBPDatabase<OutboxSchema>> | null = null;

function db(): Promise<IDBPDatabase<OutboxSchema>> {
  database ??= openDB<OutboxSchema>(DB_NAME, 1, {
    upgrade(upgrading) {
      upgrading.createObjectStore('entries', { keyPath: 'id' }).createIndex('byUser', 'userId');
    },
  });
  return database;
}

let channel: BroadcastChannel | null = null;

function announce(): void {
  if (typeof BroadcastChannel === 'undefined') return;
  channel ??= new BroadcastChannel(OUTBOX_CHANNEL);
  channel.postMessage({ type: 'changed' });
}

/** Calls back on every change made by any page or the service worker; answers how to stop. */
export function onOutboxChange(callback: () => void): () => void {
  if (typeof BroadcastChannel === 'undefined') return () => undefined;
  const listener = new BroadcastChannel(OUTBOX_CHANNEL);
  listener.onmessage = () => callback();
  return () => listener.close();
}

export async function putEntry(entry: OutboxEntry): Promise<void> {
  await (await db()).put('entries', entry);
  announce();
}

export async function getEntry(id: string): Promise<OutboxEntry | null> {
  return (await (await db()).get('entries', id)) ?? null;
}

/** A user's entries, oldest first. */
export async function listEntries(userId: string): Promise<OutboxEntry[]> {
  const entries = await (await db()).getAllFromIndex('entries', 'byUser', userId);
  return entries.sort((a, b) => a.createdAt - b.createdAt);
}

/** Changes an entry (if it is still there); answers the entry as stored. */
export async function updateEntry(id: string, changes: Partial<Omit<OutboxEntry, 'id' | 'userId'>>): Promise<OutboxEntry | null> {
  const store = await db();
  const transaction = store.transaction('entries', 'readwrite');
  const current = await transaction.store.get(id);
  const updated = current ? { ...current, ...changes, updatedAt: Date.now() } : null;
  if (updated) await transaction.store.put(updated);
  await transaction.done;
  if (updated) announce();
  return updated;
}

export async function deleteEntry(id: string): Promise<void> {
  await (await db()).delete('entries', id);
  announce();
}
