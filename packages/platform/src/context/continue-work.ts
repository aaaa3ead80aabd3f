import { inTraceOf, currentTraceparent } from '../observability/trace-context.js';
import { currentRequestId, runWithRequestContext, workContext } from './request-context.js';

/** Where work handed to the bus or a job queue comes from: the trace and the request it continues. */
export interface WorkOrigin {
  traceparent?: string | undefined;
  requestId?: string | undefined;
}

/** The origin of work made now (an event, a job), to travel with it. */
export function currentWorkOrigin(): WorkOrigin {
  return { traceparent: currentTraceparent(), requestId: currentRequestId() };
}

export interface WorkLabel {
  /** Who handles it, the context's caller: a consumer group, a queue. */
  handler: string;
  /** The span's name. */
  span: string;
  attributes: Record<string, string>;
}

/**
 * Runs the handler of an event or a job in a context of its own (the portal as the caller, the
 * request id the work came with) and in a span that continues the trace it came from: its log
 * lines, the events it makes and the audit entries it records carry the request that started it,
 * and nothing of whatever else ran before on the same consumer loop or worker.
 */
export function continueWork<T>(origin: WorkOrigin, label: WorkLabel, work: () => Promise<T>): Promise<T> {
  return runWithRequestContext(workContext(label.handler, origin.requestId), () =>
    inTraceOf(origin.traceparent, label.span, label.attributes, work),
  );
}
