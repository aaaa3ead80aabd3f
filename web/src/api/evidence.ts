import type { Evidence } from '@portal/contracts';
import { ApiRequestError, apiRequest } from './http';

/** One page of a list answer: the items and the URL of the next page (from the Link header), if any. */
export interface ListPage<T> {
  items: T[];
  next: string | null;
}

/** The URL of rel="next" in an RFC 8288 Link header, or null on the last page. */
export function nextLinkOf(header: string | null): string | null {
  if (!header) return null;
  for (const part of header.split(',')) {
    const match = /^\s*<([^>]*)>(.*)$/.exec(part);
    const rel = match ? /;\s*rel\s*=\s*"?([^";]*)"?/i.exec(match[2] ?? '') : null;
    if (match && rel && (rel[1] ?? '').toLowerCase().split(/\s+/).includes('next')) return match[1] ?? null;
  }
  return null;
}

/** The error body of a refused request, as apiRequest reads it (code, message, fields). */
async function refusal(response: Response): Promise<ApiRequestError> {
  try {
    const body = (await response.json()) as { code?: unknown; message?: unknown; fields?: unknown };
    if (typeof body.code === 'string' && typeof body.message === 'string') {
      const fields = typeof body.fields === 'object' && body.fields !== null ? (body.fields as Record<string, string>) : {};
      return new ApiRequestError(response.status, body.code, body.message, fields);
    }
  } catch {
    // not JSON
  }
  return new ApiRequestError(response.status, response.status >= 500 ? 'internal' : 'unknown', `The server answered ${response.status}`);
}

/**
 * GET one page of a paged list (a JSON array) and the next page's URL. apiRequest answers only
 * the body; the Link header is needed here, so this is its small sibling for lists.
 */
export async function fetchListPage<T>(url: string, signal?: AbortSignal): Promise<ListPage<T>> {
  let response: Response;
  try {
    response = await fetch(url, { headers: { accept: 'application/json' }, credentials: 'same-origin', signal: signal ?? null });
  } catch (error) {
    if (error instanceof DOMException && error.name === 'AbortError') throw error;
    throw new ApiRequestError(0, 'network', error instanceof Error ? error.message : 'The request failed');
  }
  if (!response.ok) throw await refusal(response);
  const items = (await response.json()) as T[];
  return { items: Array.isArray(items) ? items : [], next: nextLinkOf(response.headers.get('link')) };
}

export { EVIDENCE_PAGE_SIZE, firstPageUrl, type EvidenceScope, type ListFilters } from './list-urls';

/** GET /api/evidence/item/{id}: one item, to follow its processing. */
export function fetchEvidenceItem(id: string, signal?: AbortSignal): Promise<Evidence> {
  return apiRequest<Evidence>(`/api/evidence/item/${encodeURIComponent(id)}`, signal ? { signal } : {});
}

export interface NoteFields {
  title: string;
  notes: string;
  location?: string | null;
}

/** POST /api/evidence (JSON): a note, without media; with an idempotency key, sent twice it is made once. */
export function createNote(fields: NoteFields, idempotencyKey?: string): Promise<Evidence> {
  return apiRequest<Evidence>('/api/evidence', {
    method: 'POST',
    json: { title: fields.title, notes: fields.notes, ...(fields.location ? { location: fields.location } : {}) },
    ...(idempotencyKey ? { headers: { 'idempotency-key': idempotencyKey } } : {}),
  });
}

export interface EvidenceChanges {
  title: string;
  notes: string;
  /** A new file of the same kind (owner only). */
  file?: File | null;
}

/** PUT /api/evidence/update/{id} (multipart): title, notes and optionally a replacement file. */
export function updateEvidence(id: string, changes: EvidenceChanges): Promise<Evidence> {
  const form = new FormData();
  form.append('title', changes.title);
  form.append('notes', changes.notes);
  if (changes.file) form.append('file', changes.file, changes.file.name);
  return apiRequest<Evidence>(`/api/evidence/update/${encodeURIComponent(id)}`, { method: 'PUT', form });
}

/** DELETE /api/evidence/delete/{id} (owner or administrator). */
export function deleteEvidence(id: string): Promise<unknown> {
  return apiRequest<unknown>(`/api/evidence/delete/${encodeURIComponent(id)}`, { method: 'DELETE' });
}
