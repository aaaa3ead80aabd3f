import type { IncomingMessage, ServerResponse } from 'node:http';
import { hostOf, protocolOf, type TrustFunction } from './client-view.js';
import { PublicCache, type CachedAnswer } from './public-cache.js';
import type { ResponsePolicy } from './response-policy.js';

export interface AnswerFromMemoryOptions {
  cache: PublicCache;
  /** The gateway's response policy: request id, security headers, metrics and log line. */
  policy: ResponsePolicy;
  /** The gateway's trustProxy, or false: whose X-Forwarded-Proto and -Host are believed. */
  trust: TrustFunction | false;
  /** Counts an answer from memory among the public cache's outcomes (a hit). */
  hit: () => void;
}

/** A request whose answer depends on more than the URL, or that carries a body, is the full path's. */
const FULL_PATH_HEADERS = [
  'content-length',
  'transfer-encoding',
  'expect',
  'range',
  'if-modified-since',
  'if-match',
  'if-unmodified-since',
  'if-range',
] as const;
/** Headers an answer without a body (304) leaves out, as the services' own 304 does. */
const NOT_ON_304 = new Set(['content-type', 'content-length', 'transfer-encoding']);

/** One kept answer written out: the header list with a slot for the request id and one for the Age. */
interface PreparedHead {
  headers: string[];
  idSlot: number;
  ageSlot: number;
}

interface Prepared {
  ok?: PreparedHead;
  okHttps?: PreparedHead;
  notModified?: PreparedHead;
  notModifiedHttps?: PreparedHead;
  /** The answer's ETag without its weak marker, for If-None-Match. */
  etag: string | undefined;
}

function opaqueTag(tag: string): string {
  return tag.startsWith('W/') ? tag.slice(2) : tag;
}

/** If-None-Match against an answer's ETag, by weak comparison (RFC 9110 13.1.2), as the services' own check does. */
export function matchesIfNoneMatch(ifNoneMatch: string, etag: string | undefined): boolean {
  if (etag === undefined) return false;
  if (ifNoneMatch.trim() === '*') return true;
  for (const part of ifNoneMatch.split(',')) {
    if (opaqueTag(part.trim()) === etag) return true;
  }
  return false;
}

/**
 * Answers a request for a public page the gateway has in memory straight from node's request
 * handler, in front of fastify: a visitor's archive page costs about what sending its bytes costs.
 * What it writes is what the gateway's full path writes for the same kept answer: the security
 * headers, an `x-request-id`, the service's headers, an `Age`; and a 304 when If-None-Match names
 * the kept ETag. Everything else (a key not in memory, a request with a body, a conditional or
 * partial request it does not answer) returns false and goes the full way: the public cache's hook
 * there leads, waits or passes as before.
 *
 * The full path never ran the rate limiter for an answer from memory (the limiter is a route hook,
 * after the cache's), and neither does this one; a key not in memory reaches the limiter as before.
 */
export function answerFromMemory(options: AnswerFromMemoryOptions): (req: IncomingMessage, res: ServerResponse) => boolean {
  const { cache, trust, policy } = options;
  const prepared = new WeakMap<CachedAnswer, Prepared>();

  function prepare(answer: CachedAnswer, https: boolean, notModified: boolean): PreparedHead {
    const headers = policy.ownHead(https, '');
    const idSlot = headers.length - 1;
    for (const name in answer.headers) {
      if (notModified && NOT_ON_304.has(name)) continue;
      const value = answer.headers[name]!;
      if (Array.isArray(value)) for (const one of value) headers.push(name, one);
      else headers.push(name, value);
    }
    headers.push('age', '');
    return { headers, idSlot, ageSlot: headers.length - 1 };
  }

  function preparedOf(answer: CachedAnswer): Prepared {
    let found = prepared.get(answer);
    if (!found) {
      const etag = answer.headers.etag;
      found = { etag: typeof etag === 'string' ? opaqueTag(etag) : undefined };
      prepared.set(answer, found);
    }
    return found;
  }

  return function answerPublicPageFromMemory(req, res) {
    const startedAt = performance.now();
    const method = req.method;
    if (method !== 'GET' && method !== 'HEAD') return false;
    const url = req.url ?? '';
    if (!url.startsWith('/api/')) return false;
    const headers = req.headers;
    for (const name of FULL_PATH_HEADERS) if (headers[name] !== undefined) return false;
    const protocol = protocolOf(req, trust);
    const answer = cache.find(PublicCache.keyOf(protocol, hostOf(req, trust), url));
    if (!answer) return false;

    const https = protocol === 'https';
    const entry = preparedOf(answer);
    const ifNoneMatch = headers['if-none-match'];
    const notModified = ifNoneMatch !== undefined && matchesIfNoneMatch(ifNoneMatch, entry.etag);
    let head: PreparedHead;
    if (notModified)
      head = https ? (entry.notModifiedHttps ??= prepare(answer, true, true)) : (entry.notModified ??= prepare(answer, false, true));
    else head = https ? (entry.okHttps ??= prepare(answer, true, false)) : (entry.ok ??= prepare(answer, false, false));

    const id = policy.requestId(req);
    // writeHead turns the list into the head's bytes before it returns: the slots are filled in
    // place rather than copying the list for every request.
    const out = head.headers;
    out[head.idSlot] = id;
    out[head.ageSlot] = cache.ageOf(answer);
    const status = notModified ? 304 : answer.status;
    res.writeHead(status, out);
    if (notModified || method === 'HEAD') res.end();
    else res.end(answer.body);
    options.hit();
    policy.answered(method, url, answer.route, status, id, performance.now() - startedAt);
    return true;
  };
}
