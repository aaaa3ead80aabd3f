import { QueryClient } from '@tanstack/react-query';
import { ApiRequestError } from '../api/http';

/** Server state: refused requests (4xx) are never retried; network trouble is, twice. */
export function createQueryClient(): QueryClient {
  return new QueryClient({
    defaultOptions: {
      queries: {
        retry: (failureCount, error) => !(error instanceof ApiRequestError && error.isClientError) && failureCount < 2,
        refetchOnWindowFocus: true,
      },
      mutations: { retry: false },
    },
  });
}
