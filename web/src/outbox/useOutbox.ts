import { useQueryClient } from '@tanstack/react-query';
import { useEffect, useRef, useState } from 'react';
import { refreshEvidence } from '../evidence/queries';
import { onProgress, progressOf } from './runner';
import { listEntries, onOutboxChange, type OutboxEntry } from './store';

export interface ShownEntry extends OutboxEntry {
  /** Bytes sent, live while this page sends it. */
  live: number | null;
}

/** The signed-in user's outbox, kept current with every change (any tab, the service worker). */
export function useOutbox(userId: string | null): ShownEntry[] {
  const client = useQueryClient();
  const [entries, setEntries] = useState<OutboxEntry[]>([]);
  const [, setTick] = useState(0);
  const doneSeen = useRef(new Set<string>());

  useEffect(() => {
    if (!userId || typeof indexedDB === 'undefined') return;
    let alive = true;
    const load = () => {
      listEntries(userId)
        .then((loaded) => {
          if (!alive) return;
          setEntries(loaded);
          // An entry just done: the list from the server shows its item now.
          const fresh = loaded.filter((entry) => entry.state === 'done' && !doneSeen.current.has(entry.id));
          for (const entry of fresh) doneSeen.current.add(entry.id);
          if (fresh.length > 0) void refreshEvidence(client);
        })
        .catch((error: unknown) => console.warn('outbox: not read', error));
    };
    load();
    const stopChanges = onOutboxChange(load);
    const stopProgress = onProgress(() => setTick((tick) => tick + 1));
    return () => {
      alive = false;
      stopChanges();
      stopProgress();
    };
  }, [userId, client]);

  return entries.map((entry) => ({ ...entry, live: progressOf(entry.id) }));
}
