import type { PublicConfig } from '@portal/contracts';
import { apiRequest } from './http';

/** GET /api/config: the event-specific words and links of this run of the investigation. */
export function fetchPublicConfig(signal?: AbortSignal): Promise<PublicConfig> {
  return apiRequest<PublicConfig>('/api/config', signal ? { signal } : {});
}
