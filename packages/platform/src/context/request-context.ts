import { AsyncLocalStorage } from 'node:async_hooks';
import { randomUUID } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import type { CallerIdentity } from '../http/caller-identity.js';

/**
 * Who a piece of work is for: a signed-in person (once their identity token has verified), a
 * visitor or a request nobody vouched for, or the portal itself (an event consumer, a job worker).
 * Authorization does not read it: domain methods still take their caller as an argument.
 */
export type ContextCaller =
  | { readonly kind: 'user'; readonly userId: string; readonly role: number }
  | { readonly kind: 'anonymous' }
  | { readonly kind: 'system'; readonly name: string };

/**
 * What every line of code that runs for one request (or one event, one job) can ask without its
 * callers passing it along: the request id that correlates logs, events and audit entries, and the
 * caller. One object per request; the caller is filled in when the request's identity verifies.
 */
export interface RequestContext {
  /** The request's id (x-request-id); for an event or a job, the id of the request it came from, if any. */
  readonly requestId: string | undefined;
  caller: ContextCaller;
}

const ANONYMOUS: ContextCaller = Object.freeze({ kind: 'anonymous' });

const storage = new AsyncLocalStorage<RequestContext>();

/**
 * Runs `work` in `context`: whatever it calls, awaits, schedules (timers, promises, callbacks of
 * streams it creates) sees that context, and nothing outside does. Runs nest: the inner one wins
 * until it returns.
 */
export function runWithRequestContext<T>(context: RequestContext, work: () => T): T {
  return storage.run(context, work);
}

/** The context of what runs now, if it runs for a request, an event or a job. */
export function currentRequestContext(): RequestContext | undefined {
  return storage.getStore();
}

/** The request id of what runs now, if any (what events, audit entries and log lines carry). */
export function currentRequestId(): string | undefined {
  return storage.getStore()?.requestId;
}

/**
 * Runs `work` outside any request's context: what a request merely starts but which goes on for
 * others (the outbox relay's pass, a connection pool's first socket) must not carry its id.
 */
export function outsideRequestContext<T>(work: () => T): T {
  return storage.exit(work);
}

const REQUEST_ID = /^[A-Za-z0-9._-]{1,100}$/;

/** Whether a client's or a proxy's x-request-id may be used as the request's id (the characters logs and headers take safely). */
export function isWellFormedRequestId(value: unknown): value is string {
  return typeof value === 'string' && REQUEST_ID.test(value);
}

/** The x-request-id the request came with when it is well formed (the gateway's, for a service), else a new id. */
export function requestIdFor(incoming: string | string[] | undefined): string {
  return isWellFormedRequestId(incoming) ? incoming : randomUUID();
}

const contexts = new WeakMap<IncomingMessage, RequestContext>();

/**
 * The context of an HTTP request: made by the first code that asks for it (with the request id
 * `newId` gives, by default the x-request-id it came with: requestIdFor), the same object for
 * every later question about the same request, so that every path that answers it (a fast path
 * that hands it on to the full one, an express middleware, a handler in another service of the
 * same process) shares one id and one caller.
 */
export function httpRequestContext(
  req: IncomingMessage,
  newId: (req: IncomingMessage) => string = (req) => requestIdFor(req.headers['x-request-id']),
): RequestContext {
  let context = contexts.get(req);
  if (context === undefined) {
    context = { requestId: newId(req), caller: ANONYMOUS };
    contexts.set(req, context);
  }
  return context;
}

/**
 * Runs the handling of an HTTP request in its context (httpRequestContext): what every HTTP stack
 * of the portal calls first for each request it answers.
 */
export function runInHttpRequestContext<T>(req: IncomingMessage, work: () => T): T {
  return storage.run(httpRequestContext(req), work);
}

/** The caller of a context for an identity that verified. */
export function contextCallerOf(identity: Pick<CallerIdentity, 'userId' | 'role'>): ContextCaller {
  return { kind: 'user', userId: identity.userId, role: identity.role };
}

/** Records who an HTTP request is for, once their identity has verified. */
export function setRequestCaller(req: IncomingMessage, identity: Pick<CallerIdentity, 'userId' | 'role'>): void {
  httpRequestContext(req).caller = contextCallerOf(identity);
}

/**
 * The context of work the portal does for a message (an event handler, a job): the portal is the
 * caller, and the request id is the one the message came with (or none).
 */
export function workContext(name: string, requestId: string | undefined): RequestContext {
  return { requestId, caller: { kind: 'system', name } };
}
