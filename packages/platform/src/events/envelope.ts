import { randomUUID } from 'node:crypto';
import type { EventEnvelope } from '@portal/contracts';

export interface EventDraft<T> {
  type: string;
  key: string;
  data: T;
  version?: number;
  requestId?: string;
}

export function createEvent<T>({ type, key, data, version = 1, requestId }: EventDraft<T>): EventEnvelope<T> {
  return {
    id: randomUUID(),
    type,
    version,
    occurredAt: new Date().toISOString(),
    key,
    data,
    ...(requestId ? { trace: { requestId } } : {}),
  };
}
