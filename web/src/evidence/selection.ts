import { useSyncExternalStore } from 'react';

/** What the red plus button offered: the camera (photo or video), a sound recording, or a note. */
export type EvidenceKind = 'camera' | 'audio' | 'notes';

export interface EvidenceSelection {
  kind: EvidenceKind | null;
  /** The chosen or recorded media, kept in memory only until the evidence is submitted. */
  media: File | null;
}

let selection: EvidenceSelection = { kind: null, media: null };
const listeners = new Set<() => void>();

function set(next: EvidenceSelection): void {
  selection = next;
  for (const listener of listeners) listener();
}

function subscribe(listener: () => void): () => void {
  listeners.add(listener);
  return () => listeners.delete(listener);
}

/** The kind chosen with the plus button; any media chosen before is forgotten. */
export function chooseKind(kind: EvidenceKind): void {
  set({ kind, media: null });
}

/** The media picked or recorded on /evidenceupload, for /evidence-details. */
export function selectMedia(media: File): void {
  set({ ...selection, media });
}

/** After a submission: the selected media is cleared (SPEC section 4). */
export function clearSelection(): void {
  set({ kind: null, media: null });
}

export function useEvidenceSelection(): EvidenceSelection {
  const current = () => selection;
  // (The same on the server: the build renders the first screens, build/first-screen-styles.ts.)
  return useSyncExternalStore(subscribe, current, current);
}

/** A kind carried in router state (it survives a reload of the page, the in-memory store does not). */
export function kindFromState(state: unknown): EvidenceKind | null {
  const kind = typeof state === 'object' && state !== null ? (state as { kind?: unknown }).kind : undefined;
  return kind === 'camera' || kind === 'audio' || kind === 'notes' ? kind : null;
}
