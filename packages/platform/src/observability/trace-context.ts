import { context, propagation, SpanKind, SpanStatusCode, trace, type Context } from '@opentelemetry/api';

const tracer = trace.getTracer('portal');

/** The W3C traceparent of what runs now, if tracing is on and a span is active. */
export function currentTraceparent(): string | undefined {
  const carrier: Record<string, string> = {};
  propagation.inject(context.active(), carrier);
  return carrier.traceparent;
}

function contextFrom(traceparent: string | undefined): Context {
  return traceparent ? propagation.extract(context.active(), { traceparent }) : context.active();
}

/**
 * Runs work (handling an event, processing a job) in a span that continues the trace it came from,
 * so one trace follows a request from the gateway through a service, the bus and the worker.
 * Without a tracer provider (tracing off) this costs next to nothing.
 */
export function inTraceOf<T>(
  traceparent: string | undefined,
  name: string,
  attributes: Record<string, string>,
  work: () => Promise<T>,
): Promise<T> {
  return tracer.startActiveSpan(name, { kind: SpanKind.CONSUMER, attributes }, contextFrom(traceparent), async (span) => {
    try {
      return await work();
    } catch (error) {
      span.recordException(error as Error);
      span.setStatus({ code: SpanStatusCode.ERROR, message: (error as Error).message });
      throw error;
    } finally {
      span.end();
    }
  });
}
