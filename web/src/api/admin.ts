import type { AdminUserUpdate, AuditEntry, Evidence, User } from '@portal/contracts';
import { fetchListPage, type ListPage } from './evidence';
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
