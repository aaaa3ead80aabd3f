import type {
  AdminUserUpdate,
  AuditEntry,
  EditFacesRequest,
  Evidence,
  EvidenceFaces,
  EvidenceCounts,
  MarkReviewed,
  MediaType,
  SelectedVisibility,
  User,
} from '@portal/contracts';
import { EXPORT_MAX_IDS, MAX_SELECTED_IDS } from '@portal/contracts';
import { fetchListPage, firstPageUrl, type ListFilters, type ListPage } from './evidence';
import { apiRequest } from './http';

export const USERS_PAGE_SIZE = 50;
export const FIRST_USERS_PAGE = `/api/user/users?limit=${USERS_PAGE_SIZE}`;

/** GET /api/user/users: one page of all users, oldest first (administrators). */
export function fetchUsersPage(url: string, signal?: AbortSignal): Promise<ListPage<User>> {
  return fetchListPage<User>(url, signal);
}

/** PUT /api/user/admin/{id}: username, e-mail, phone number and full name (role and video_watched never change). */
export function updateUserAsAdmin(id: string, changes: AdminUserUpdate): Promise<User> {
  return apiRequest<User>(`/api/user/admin/${encodeURIComponent(id)}`, { method: 'PUT', json: changes });
}

/** DELETE /api/user/{id}: not oneself, not the last administrator. */
export function deleteUser(id: string): Promise<{ ok: true; message?: string }> {
  return apiRequest<{ ok: true; message?: string }>(`/api/user/${encodeURIComponent(id)}`, { method: 'DELETE' });
}

/** GET /api/evidence/{id}/faces: the regions found (and changed) in an item's picture. */
export function fetchFaces(id: string, signal?: AbortSignal): Promise<EvidenceFaces> {
  return apiRequest<EvidenceFaces>(`/api/evidence/${encodeURIComponent(id)}/faces`, signal ? { signal } : {});
}

/** PUT /api/evidence/{id}/faces: remove, restore or add regions, on the version seen. */
export function editFaces(id: string, change: EditFacesRequest): Promise<EvidenceFaces> {
  return apiRequest<EvidenceFaces>(`/api/evidence/${encodeURIComponent(id)}/faces`, { method: 'PUT', json: change });
}

/** PUT /api/evidence/{id}/faces/consent: the faces may be shown (consent on record), or not. */
export function setFacesConsent(id: string, consent: boolean, note?: string): Promise<EvidenceFaces> {
  return apiRequest<EvidenceFaces>(`/api/evidence/${encodeURIComponent(id)}/faces/consent`, {
    method: 'PUT',
    json: note ? { consent, note } : { consent },
  });
}

/** PUT /api/evidence/clearance/{id}: toggles one item between public and private. */
export function toggleClearance(id: string): Promise<Evidence> {
  return apiRequest<Evidence>(`/api/evidence/clearance/${encodeURIComponent(id)}`, { method: 'PUT' });
}

export interface BulkVisibility {
  ok: true;
  changed: number;
  is_public: boolean;
}

/** PUT /api/evidence/makeAllPublic or makeAllSecret: every item at once. */
export function setAllVisibility(makePublic: boolean): Promise<BulkVisibility> {
  return apiRequest<BulkVisibility>(makePublic ? '/api/evidence/makeAllPublic' : '/api/evidence/makeAllSecret', { method: 'PUT' });
}

/** GET /api/evidence/admin/counts: items waiting for review, public and private. */
export function fetchEvidenceCounts(signal?: AbortSignal): Promise<EvidenceCounts> {
  return apiRequest<EvidenceCounts>('/api/evidence/admin/counts', signal ? { signal } : {});
}

/** Splits ids into the calls the selected-items routes take (at most 500 each). */
function chunks(ids: readonly string[]): string[][] {
  const parts: string[][] = [];
  for (let start = 0; start < ids.length; start += MAX_SELECTED_IDS) parts.push(ids.slice(start, start + MAX_SELECTED_IDS));
  return parts;
}

/** PUT /api/evidence/review/{id}: one item reviewed, its visibility as it was. */
export function markItemReviewed(id: string): Promise<Evidence> {
  return apiRequest<Evidence>(`/api/evidence/review/${encodeURIComponent(id)}`, { method: 'PUT' });
}

/** PUT /api/evidence/visibility, 500 ids a call: publishes or unpublishes the chosen items. */
export async function setSelectedVisibility(ids: readonly string[], isPublic: boolean): Promise<SelectedVisibility> {
  const total: SelectedVisibility = { ok: true, is_public: isPublic, changed: [], unchanged: [], not_found: [] };
  for (const part of chunks(ids)) {
    const result = await apiRequest<SelectedVisibility>('/api/evidence/visibility', {
      method: 'PUT',
      json: { ids: part, is_public: isPublic },
    });
    total.changed.push(...result.changed);
    total.unchanged.push(...result.unchanged);
    total.not_found.push(...result.not_found);
  }
  return total;
}

/** PUT /api/evidence/review, 500 ids a call: marks the chosen items reviewed. */
export async function markReviewed(ids: readonly string[]): Promise<MarkReviewed> {
  const total: MarkReviewed = { ok: true, reviewed: [], unchanged: [], not_found: [] };
  for (const part of chunks(ids)) {
    const result = await apiRequest<MarkReviewed>('/api/evidence/review', { method: 'PUT', json: { ids: part } });
    total.reviewed.push(...result.reviewed);
    total.unchanged.push(...result.unchanged);
    total.not_found.push(...result.not_found);
  }
  return total;
}

/** The ids of every item the administration list's filters match, page by page (100 a page). */
export async function fetchMatchingIds(type: MediaType | null, filters: ListFilters, signal?: AbortSignal): Promise<string[]> {
  const ids: string[] = [];
  let url: string | null = firstPageUrl({ kind: 'admin' }, type, 100, filters);
  while (url) {
    const page: ListPage<Evidence> = await fetchListPage<Evidence>(url, signal);
    ids.push(...page.items.map((item) => item.id));
    url = page.next;
  }
  return ids;
}

/**
 * GET /api/evidence/export: the investigator's zip of the chosen items (at most EXPORT_MAX_IDS
 * ids), or of every item the filters match; null when too many items are ticked one by one.
 */
export function evidenceExportUrl(
  choice: { ids: readonly string[] } | { type: MediaType | null; filters: ListFilters },
  originals: boolean,
): string | null {
  const query = new URLSearchParams();
  if ('ids' in choice) {
    if (choice.ids.length === 0 || choice.ids.length > EXPORT_MAX_IDS) return null;
    query.set('ids', choice.ids.join(','));
  } else {
    if (choice.type !== null) query.set('type', String(choice.type));
    const q = choice.filters.q?.trim();
    if (q) query.set('q', q);
    if (choice.filters.review_status) query.set('review_status', choice.filters.review_status);
    if (choice.filters.visibility) query.set('visibility', choice.filters.visibility);
  }
  if (originals) query.set('originals', 'true');
  return `/api/evidence/export?${query.toString()}`;
}

export interface ActivityFilter {
  actor?: string;
  action?: string;
  target?: string;
  /** ISO 8601 */
  from?: string;
  to?: string;
}

function activityQuery(filter: ActivityFilter): URLSearchParams {
  const query = new URLSearchParams();
  for (const [name, value] of Object.entries(filter)) if (typeof value === 'string' && value.trim() !== '') query.set(name, value.trim());
  return query;
}

/** GET /api/admin/activity: the first page of the audit log, newest first, for these filters. */
export function firstActivityPage(filter: ActivityFilter, limit = 50): string {
  const query = activityQuery(filter);
  query.set('limit', String(limit));
  return `/api/admin/activity?${query.toString()}`;
}

/** GET /api/admin/activity.csv: everything matching the filters, as a CSV download. */
export function activityCsvUrl(filter: ActivityFilter): string {
  const query = activityQuery(filter).toString();
  return `/api/admin/activity.csv${query ? `?${query}` : ''}`;
}

export function fetchActivityPage(url: string, signal?: AbortSignal): Promise<ListPage<AuditEntry>> {
  return fetchListPage<AuditEntry>(url, signal);
}
