import type { MediaType, ReviewStatus } from '@portal/contracts';

// The addresses of the evidence lists, with no other import: the build reads them too
// (build/route-preloads.ts preloads the archive's first page).

/** Which list of evidence: one's own, the public archive, everything (administrators) or one participant's. */
export type EvidenceScope = { kind: 'own' } | { kind: 'public' } | { kind: 'admin' } | { kind: 'user'; userId: string };

export const EVIDENCE_PAGE_SIZE = 24;

/** Filters beside the media type: search words (all lists but one's own) and, for administrators, moderation. */
export interface ListFilters {
  q?: string;
  review_status?: ReviewStatus;
  visibility?: 'public' | 'private';
}

/** The URL of the first page of a list, optionally of one media type and with filters. */
export function firstPageUrl(scope: EvidenceScope, type: MediaType | null, limit = EVIDENCE_PAGE_SIZE, filters: ListFilters = {}): string {
  const base =
    scope.kind === 'own'
      ? '/api/evidence'
      : scope.kind === 'public'
        ? '/api/evidence/public'
        : scope.kind === 'admin'
          ? '/api/evidence/admin'
          : `/api/user/${encodeURIComponent(scope.userId)}/evidence`;
  const query = new URLSearchParams({ limit: String(limit) });
  if (type !== null) query.set('type', String(type));
  const q = filters.q?.trim();
  if (q) query.set('q', q);
  if (filters.review_status) query.set('review_status', filters.review_status);
  if (filters.visibility) query.set('visibility', filters.visibility);
  return `${base}?${query.toString()}`;
}
