import { queryOptions, useQuery } from '@tanstack/react-query';
import { fetchPublicConfig } from '../api/config';

export const PUBLIC_CONFIG_KEY = ['public-config'] as const;

/** GET /api/config as a query (also started before the first render, see main.tsx). */
export const publicConfigQuery = queryOptions({
  queryKey: PUBLIC_CONFIG_KEY,
  queryFn: ({ signal }) => fetchPublicConfig(signal),
  staleTime: Infinity,
  gcTime: Infinity,
});

/** The event-specific words and links (GET /api/config); they change only with a redeployment. */
export function usePublicConfig() {
  return useQuery(publicConfigQuery);
}
