import { randomUUID } from 'node:crypto';
import type { EventEnvelope } from '@portal/contracts';
import { currentTraceparent } from '../observability/trace-context.js';

export interface EventDraft<T> {
  type: string;
  key: string;
  data: T;
  version?: number;
  requestId?: string;
}

/** A new event; it carries the trace it was made in, so its consumers continue that trace. */
export function createEvent<T>({ type, key, data, version = 1, requestId }: EventDraft<T>): EventEnvelope<T> {
  const traceparent = currentTraceparent();
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
