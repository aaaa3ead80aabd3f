import { randomUUID } from 'node:crypto';
import type { IncomingHttpHeaders, IncomingMessage, ServerResponse } from 'node:http';
import { MESSAGES, type PublicConfig } from '@portal/contracts';
import {
  httpRequestContext,
  isWellFormedRequestId,
  redactUrl,
  type Logger,
  type RequestContext,
  type ServiceMetrics,
} from '@portal/platform';
import type { TrustFunction } from './client-view.js';
import { forEachEndToEnd } from './hop-by-hop.js';
import { securityHeaderPairs } from './security.js';

const UNAVAILABLE = 'The service is not answering right now. Please try again shortly.';

/** What the rate limiter decided for one request (@fastify/rate-limit's `createRateLimit()`). */
export interface LimitDecision {
  isAllowed: boolean;
  isExceeded: boolean;
  max: number;
  remaining: number;
  ttlInSeconds: number;
}

export interface ResponsePolicyOptions {
  publicConfig: PublicConfig;
  /** TRUST_PROXY as one function (false: no proxy is believed). */
  trust: TrustFunction | false;
  logger: Logger;
  metrics?: ServiceMetrics;
}

/**
 * How the gateway answers, whoever writes the answer: fastify's hooks (plugins/request-context.ts,
 * plugins/security-headers.ts), an answer from memory (answer-from-memory.ts) and the proxy fast
 * path (proxy-fast-path.ts) all take the request id, the security headers, the rate-limit headers,
 * the merge with a service's headers, the latency metric, the request log line and the error
 * shape from here, so that no path can answer differently from another.
 */
export class ResponsePolicy {
  /** The security headers of every answer over plain HTTP and over HTTPS, in the order helmet sets them. */
  readonly securityHeaders: { readonly http: readonly [string, string][]; readonly https: readonly [string, string][] };
  /** The names of the headers the gateway sets itself, lower case. */
  private readonly ownNames: ReadonlySet<string>;

  constructor(private readonly options: ResponsePolicyOptions) {
    this.securityHeaders = {
      http: securityHeaderPairs(options.publicConfig, false),
      https: securityHeaderPairs(options.publicConfig, true),
    };
    const own = new Set<string>(['x-request-id', 'x-ratelimit-limit', 'x-ratelimit-remaining', 'x-ratelimit-reset']);
    for (const [name] of [...this.securityHeaders.http, ...this.securityHeaders.https]) own.add(name.toLowerCase());
    this.ownNames = own;
  }

  /**
   * A request's context (the platform's request context, which the edge server runs every request
   * in): its id a trusted proxy's X-Request-Id when it is well formed, else a new one.
   */
  readonly requestContext = (req: IncomingMessage): RequestContext => httpRequestContext(req, this.newRequestId);

  /** A request's id, its context's (fastify's genReqId, and the answers in front of fastify). */
  readonly requestId = (req: IncomingMessage): string => this.requestContext(req).requestId!;

  private readonly newRequestId = (req: IncomingMessage): string => {
    const incoming = req.headers['x-request-id'];
    return this.options.trust !== false && isWellFormedRequestId(incoming) ? incoming : randomUUID();
  };

  /** Sets the security headers on a response fastify will write. */
  writeSecurityHeaders(res: ServerResponse, https: boolean): void {
    for (const [name, value] of https ? this.securityHeaders.https : this.securityHeaders.http) res.setHeader(name, value);
  }

  /** The gateway's own headers of an answer written in front of fastify, as a writeHead list. */
  ownHead(https: boolean, id: string, decision: LimitDecision | null = null): string[] {
    const head: string[] = [];
    for (const [name, value] of https ? this.securityHeaders.https : this.securityHeaders.http) head.push(name, value);
    head.push('x-request-id', id);
    // As @fastify/rate-limit sets them on a request it counted and let through.
    if (decision && !decision.isAllowed) {
      head.push(
        'x-ratelimit-limit',
        String(decision.max),
        'x-ratelimit-remaining',
        String(decision.remaining),
        'x-ratelimit-reset',
        String(decision.ttlInSeconds),
      );
    }
    return head;
  }

  /**
   * The head of a service's answer passed on in front of fastify: the gateway's own headers, then
   * the service's without those of its connection. A header the gateway set too (the service's
   * own x-request-id, a security header) takes the service's value in the gateway's place, as
   * fastify's reply merges them.
   */
  proxiedHead(https: boolean, id: string, decision: LimitDecision | null, status: number, upstream: IncomingHttpHeaders): string[] {
    const head = this.ownHead(https, id, decision);
    const ownCount = head.length;
    forEachEndToEnd(upstream, (name, value) => {
      // An answer without a body says no length (as the full path sends it).
      if (value === undefined || (status === 204 && name === 'content-length')) return;
      const own = this.ownNames.has(name) && !Array.isArray(value) ? ownIndex(head, ownCount, name) : -1;
      if (own !== -1) head[own + 1] = value as string;
      else if (Array.isArray(value)) for (const one of value) head.push(name, one);
      else head.push(name, value);
    });
    return head;
  }

  /** Records an answer once it has gone: the route's latency metric and the request log line at the level its status calls for. */
  answered(method: string, url: string, route: string, status: number, id: string, ms: number): void {
    this.options.metrics?.observeRequest(method, route, status, ms / 1000);
    const level = status >= 500 ? 'error' : status >= 400 ? 'info' : 'debug';
    // Most answers are 2xx, logged at debug, which production does not write: skip building the line.
    const logger = this.options.logger;
    if (logger.isLevelEnabled(level)) logger[level]({ reqId: id, req: { id, method, url: redactUrl(url) }, status, ms }, 'request');
  }

  /** An answer that broke off after its head was sent (the service's body failed). */
  brokenOff(req: IncomingMessage, id: string, error: Error): void {
    this.options.logger.warn(
      { reqId: id, err: error, req: { id, method: req.method, url: redactUrl(req.url ?? '') } },
      'the service answer broke off',
    );
  }

  /** The portal's error shape for a failed request: the status it answers with and its body. */
  errorAnswer(error: { statusCode?: number; code?: string; message: string }): { status: number; body: { code: string; message: string } } {
    const status = error.statusCode && error.statusCode >= 400 ? error.statusCode : 500;
    const message =
      status === 429
        ? MESSAGES.tooManyRequests
        : status === 502 || status === 503 || status === 504
          ? UNAVAILABLE
          : status >= 500
            ? MESSAGES.internal
            : error.message;
    const code = status === 429 ? 'rate_limited' : status >= 500 ? 'internal' : (error.code ?? 'validation_failed');
    return { status, body: { code, message } };
  }

  /** A service that could not answer (its answer cut off before the gateway had it whole). */
  readonly unavailable = { code: 'internal', message: UNAVAILABLE } as const;
}

/** Where a header the gateway set sits in the head list (names compared lower case), or -1. */
function ownIndex(head: string[], ownCount: number, name: string): number {
  for (let i = 0; i < ownCount; i += 2) if (head[i]!.toLowerCase() === name) return i;
  return -1;
}
