import { queryOptions, useInfiniteQuery, useQueries, useQueryClient, type InfiniteData, type QueryClient } from '@tanstack/react-query';
import { useEffect, useMemo } from 'react';
import type { Evidence, MediaType } from '@portal/contracts';
import {
  fetchEvidenceItem,
  fetchListPage,
  firstPageUrl,
  EVIDENCE_PAGE_SIZE,
  type EvidenceScope,
  type ListFilters,
  type ListPage,
} from '../api/evidence';

/** Every evidence query starts with this key: invalidating it refreshes every list. */
export const EVIDENCE_KEY = ['evidence'] as const;
const LIST_KEY = [...EVIDENCE_KEY, 'list'] as const;

function scopeKey(scope: EvidenceScope): string {
  return scope.kind === 'user' ? `user:${scope.userId}` : scope.kind;
}

/** The single item followed while its media is processed. */
export function evidenceItemKey(id: string) {
  return [...EVIDENCE_KEY, 'item', id] as const;
}

export function evidenceListKey(scope: EvidenceScope, type: MediaType | null, filters: ListFilters = {}) {
  const { q, review_status, visibility } = filters;
  return [
    ...LIST_KEY,
    scopeKey(scope),
    type ?? 'all',
    { q: q?.trim() || null, review_status: review_status ?? null, visibility: visibility ?? null },
  ] as const;
}

type EvidencePages = InfiniteData<ListPage<Evidence>, string>;

/**
 * One list of evidence, a page at a time (newest first): the next page's URL comes from the Link
 * header of the previous answer.
 */
export function useEvidenceList(scope: EvidenceScope, type: MediaType | null, options: { enabled?: boolean; filters?: ListFilters } = {}) {
  const query = useInfiniteQuery({
    queryKey: evidenceListKey(scope, type, options.filters),
    queryFn: ({ pageParam, signal }) => fetchListPage<Evidence>(pageParam, signal),
    initialPageParam: firstPageUrl(scope, type, EVIDENCE_PAGE_SIZE, options.filters),
    getNextPageParam: (last) => last.next ?? undefined,
    enabled: options.enabled ?? true,
  });
  const items = useMemo(() => query.data?.pages.flatMap((page) => page.items) ?? [], [query.data]);
  useFollowProcessing(items);
  return { ...query, items };
}

/** Puts a fresh copy of an item into every cached list that holds it. */
export function replaceCachedItem(client: QueryClient, item: Evidence): void {
  client.setQueriesData<EvidencePages>({ queryKey: LIST_KEY }, (data) => {
    if (!data || !data.pages.some((page) => page.items.some((entry) => entry.id === item.id))) return data;
    return {
      ...data,
      pages: data.pages.map((page) => ({ ...page, items: page.items.map((entry) => (entry.id === item.id ? item : entry)) })),
    };
  });
}

/** Takes an item out of every cached list (after it was deleted). */
export function removeCachedItem(client: QueryClient, id: string): void {
  client.setQueriesData<EvidencePages>({ queryKey: LIST_KEY }, (data) => {
    if (!data) return data;
    return { ...data, pages: data.pages.map((page) => ({ ...page, items: page.items.filter((entry) => entry.id !== id) })) };
  });
}

/** Refetches every evidence list (after something was added, changed or deleted). */
export function refreshEvidence(client: QueryClient): Promise<void> {
  return client.invalidateQueries({ queryKey: EVIDENCE_KEY });
}

const POLL_MS = 1500;

/**
 * Items whose media is still being processed are asked for one by one (GET /api/evidence/item/{id})
 * until they are ready or failed; each answer replaces the item in the lists.
 */
function useFollowProcessing(items: readonly Evidence[]): void {
  const client = useQueryClient();
  const processing = useMemo(() => items.filter((item) => item.media_status === 'processing').map((item) => item.id), [items]);
  const results = useQueries({
    queries: processing.map((id) =>
      queryOptions({
        queryKey: evidenceItemKey(id),
        queryFn: ({ signal }) => fetchEvidenceItem(id, signal),
        refetchInterval: (query) => (query.state.data && query.state.data.media_status !== 'processing' ? false : POLL_MS),
        staleTime: 0,
      }),
    ),
  });
  const finished = results
    .map((result) => result.data)
    .filter((item): item is Evidence => item !== undefined && item.media_status !== 'processing');
  const signature = finished.map((item) => `${item.id}:${item.media_status}`).join(',');
  useEffect(() => {
    for (const item of finished) replaceCachedItem(client, item);
    // `signature` names what changed; `finished` is rebuilt on every render.
  }, [client, signature]);
}
