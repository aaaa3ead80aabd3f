import { IDENTITY_HEADER, SERVICE_TOKEN_HEADER } from '@portal/platform';
import type { ResolvedCaller } from '../sessions/session-resolver.js';

/**
 * The header rules of a proxy, in one place for every path that proxies (the fastify proxy, the
 * public cache and the proxy fast path): which headers describe a connection rather than the
 * request or the answer, and which of a client's headers never reach a service.
 */

/** Headers of one connection (RFC 9110 7.6.1): a proxy never passes them on. */
export const HOP_BY_HOP: ReadonlySet<string> = new Set([
  'connection',
  'keep-alive',
  'proxy-authenticate',
  'proxy-authorization',
  'proxy-connection',
  'te',
  'trailer',
  'transfer-encoding',
  'upgrade',
]);

/** A client's request headers that describe its connection, not the request (as @fastify/reply-from drops them). */
export const CONNECTION_REQUEST_HEADERS: ReadonlySet<string> = new Set([
  'connection',
  'keep-alive',
  'proxy-connection',
  'te',
  'trailer',
  'transfer-encoding',
  'upgrade',
  'host',
]);

/** Request headers never passed on to a service as the client sent them (the gateway sets its own). */
const DROPPED_INWARD_HEADERS: ReadonlySet<string> = new Set<string>([
  'cookie',
  IDENTITY_HEADER,
  SERVICE_TOKEN_HEADER,
  'x-forwarded-for',
  'x-forwarded-proto',
  'x-forwarded-host',
  'x-request-id',
  // Answered by the gateway itself (100 Continue, or an early 413); undici refuses to send it.
  'expect',
]);

/** The header names a Connection header lists, lower case (null without one). */
export function namedInConnection(connection: string | string[] | number | undefined): string[] | null {
  return connection === undefined
    ? null
    : String(connection)
        .toLowerCase()
        .split(',')
        .map((name) => name.trim());
}

/**
 * Visits each of an answer's headers but those of its connection (and those its Connection
 * header names).
 */
export function forEachEndToEnd<T extends string | string[] | number | undefined>(
  headers: Record<string, T>,
  visit: (name: string, value: T) => void,
): void {
  const named = namedInConnection(headers.connection);
  for (const name in headers) {
    if (!HOP_BY_HOP.has(name) && (named === null || !named.includes(name))) visit(name, headers[name]!);
  }
}

/** An upstream answer's headers without those of its connection (and those its Connection header names). */
export function withoutHopByHop<T extends string | string[] | number | undefined>(headers: Record<string, T>): Record<string, T> {
  const kept: Record<string, T> = {};
  forEachEndToEnd(headers, (name, value) => {
    kept[name] = value;
  });
  return kept;
}

/** A client's request headers without those of its connection (what reply-from passes on). */
export function requestEndToEnd(headers: Record<string, string | string[] | undefined>): Record<string, string | string[] | undefined> {
  const copy: Record<string, string | string[] | undefined> = {};
  const named = namedInConnection(headers.connection);
  for (const name in headers) {
    if (!CONNECTION_REQUEST_HEADERS.has(name) && (named === null || !named.includes(name))) copy[name] = headers[name];
  }
  return copy;
}

/** What a service is told about the request beside its own headers. */
export interface InwardRequest {
  id: string;
  ip: string;
  protocol: string;
  host: string;
  caller: ResolvedCaller | null;
}

/**
 * The headers a service gets for a request: whatever a client claims about identity is dropped;
 * only the gateway's signed token counts, with the gateway's request id and X-Forwarded-*.
 */
export function inwardHeaders(
  request: InwardRequest,
  headers: Record<string, string | string[] | undefined>,
): Record<string, string | string[] | undefined> {
  // A plain loop: rest destructuring with computed keys takes a slow path in V8 (it showed in
  // the gateway's CPU profile). `headers` is reply-from's own plain copy of the request headers.
  const inward: Record<string, string | string[] | undefined> = {};
  for (const name in headers) {
    if (!DROPPED_INWARD_HEADERS.has(name)) inward[name] = headers[name];
  }
  inward['x-request-id'] = request.id;
  inward['x-forwarded-for'] = request.ip;
  inward['x-forwarded-proto'] = request.protocol;
  inward['x-forwarded-host'] = request.host;
  if (request.caller) inward[IDENTITY_HEADER] = request.caller.token;
  return inward;
}
