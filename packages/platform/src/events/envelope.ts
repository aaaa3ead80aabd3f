import { randomUUID } from 'node:crypto';
import type { EventEnvelope } from '@portal/contracts';
import { currentWorkOrigin } from '../context/continue-work.js';

export interface EventDraft<T> {
  type: string;
  key: string;
  data: T;
  version?: number;
}

/**
 * A new event; it carries the trace and the request it was made in (the request context), so its
 * consumers continue that trace and their log lines and events keep that request id.
 */
export function createEvent<T>({ type, key, data, version = 1 }: EventDraft<T>): EventEnvelope<T> {
  const { traceparent, requestId } = currentWorkOrigin();
  return {
    id: randomUUID(),
    type,
    version,
    occurredAt: new Date().toISOString(),
    key,
    data,
    ...(requestId || traceparent ? { trace: { ...(requestId ? { requestId } : {}), ...(traceparent ? { traceparent } : {}) } } : {}),
  };
}
