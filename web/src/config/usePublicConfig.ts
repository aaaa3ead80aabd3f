import { useQuery } from '@tanstack/react-query';
import { fetchPublicConfig } from '../api/config';

export const PUBLIC_CONFIG_KEY = ['public-config'] as const;

/** The event-specific words and links (GET /api/config); they change only with a redeployment. */
export function usePublicConfig() {
  return useQuery({
    queryKey: PUBLIC_CONFIG_KEY,
    queryFn: ({ signal }) => fetchPublicConfig(signal),
    staleTime: Infinity,
    gcTime: Infinity,
  });
}
