import type { IncomingHttpHeaders } from 'node:http';
import type { Readable } from 'node:stream';
import { LRUCache } from 'lru-cache';
import { withoutHopByHop } from './hop-by-hop.js';

/** One stored upstream answer: replayed byte for byte, with an Age header. */
export interface CachedAnswer {
  status: number;
  headers: Record<string, string | string[]>;
  body: Buffer;
  storedAt: number;
  /** The gateway route (template) that answered it: the metrics label of every answer from it. */
  route: string;
}

export interface PublicCacheOptions {
  /** How long an answer is kept at most (ms); never longer than the answer's own max-age. */
  ttlMs: number;
  maxEntries?: number;
  maxBytes?: number;
  /** Larger answers pass through as streams and are never buffered. */
  maxEntryBytes?: number;
  /** After a change that another service applies on its own (a rename, a media result), answers are not stored for this long (default 2 s). */
  settleMs?: number;
  now?: () => number;
}

/** What a request asked of the cache: the key it may share, and whether it leads the upstream request for it. */
export interface CacheTicket {
  key: string;
  generation: number;
  /** Set for the one request per key that goes upstream while others wait for its answer. */
  settle?: (answer: CachedAnswer | null) => void;
}

export type Lookup =
  | { kind: 'hit'; answer: CachedAnswer }
  | { kind: 'wait'; answer: Promise<CachedAnswer | null> }
  | { kind: 'lead'; ticket: CacheTicket }
  | { kind: 'pass' };

interface RequestLike {
  method: string;
  url: string;
  host: string;
  protocol: string;
  headers: IncomingHttpHeaders;
}

/** Each answer's own: the request id, and the Age the cache sets. */
const NOT_REPLAYED = new Set(['x-request-id', 'age']);

/** A request that asks for part of an answer, or for it only if it changed, goes to the service. */
const BYPASSING_REQUEST_HEADERS = ['range', 'if-none-match', 'if-modified-since', 'if-match', 'if-unmodified-since', 'if-range'] as const;
/** A waiting request goes upstream itself if its leader has not settled by then (a safety net: every path settles). */
const WAIT_LIMIT_MS = 30_000;

/**
 * How long (ms) a shared cache may keep this upstream answer, 0 if not at all: a 200 that says
 * `Cache-Control: public` with a positive `s-maxage` or `max-age`, without `private`, `no-store`,
 * `no-cache`, `Set-Cookie` or `Vary` (the gateway keys by URL alone, so an answer that varies by a
 * request header is never shared).
 */
export function storableForMs(status: number, headers: IncomingHttpHeaders, ttlMs: number): number {
  if (status !== 200 || headers['set-cookie'] !== undefined || headers.vary !== undefined) return 0;
  const cacheControl = headers['cache-control'];
  if (typeof cacheControl !== 'string') return 0;
  let isPublic = false;
  let maxAge: number | undefined;
  let sharedMaxAge: number | undefined;
  for (const part of cacheControl.split(',')) {
    const [rawName, rawValue] = part.split('=', 2);
    const name = rawName!.trim().toLowerCase();
    const value = rawValue?.trim().replace(/^"|"$/g, '');
    if (name === 'public') isPublic = true;
    else if (name === 'private' || name === 'no-store' || name === 'no-cache') return 0;
    else if (name === 'max-age' || name === 's-maxage') {
      if (!value || !/^\d+$/.test(value)) return 0;
      if (name === 'max-age') maxAge = Number(value);
      else sharedMaxAge = Number(value);
    }
  }
  const seconds = sharedMaxAge ?? maxAge;
  if (!isPublic || seconds === undefined || seconds <= 0) return 0;
  return Math.min(ttlMs, seconds * 1000);
}

/**
 * The gateway's memory of public API answers, as a CDN or an ingress cache would keep them, made
 * correct for the portal: only what the services mark `public` (the archive pages and public
 * items), for a short time of its own, bounded in entries and bytes (lru-cache), one upstream
 * request per key at a time (the others wait for its answer), and emptied at once by any change
 * (`clear`): a write through this gateway or an event from the bus.
 */
export class PublicCache {
  private readonly answers: LRUCache<string, CachedAnswer>;
  /** Keys whose last answer was not storable: their requests go upstream at once, without waiting for a leader. */
  private readonly passes: LRUCache<string, true>;
  private readonly inflight = new Map<string, Promise<CachedAnswer | null>>();
  private readonly maxEntryBytes: number;
  private readonly settleMs: number;
  private readonly now: () => number;
  private generation = 0;
  private noStoreUntil = 0;

  constructor(private readonly options: PublicCacheOptions) {
    this.maxEntryBytes = options.maxEntryBytes ?? 1024 * 1024;
    this.settleMs = options.settleMs ?? 2000;
    this.now = options.now ?? Date.now;
    this.answers = new LRUCache({
      max: options.maxEntries ?? 1000,
      maxSize: options.maxBytes ?? 32 * 1024 * 1024,
      sizeCalculation: (answer) => answer.body.length + 512,
      ttl: Math.max(options.ttlMs, 1),
      ttlAutopurge: false,
      perf: { now: () => this.now() },
    });
    this.passes = new LRUCache({ max: 10_000, ttl: Math.max(options.ttlMs, 1), ttlAutopurge: false, perf: { now: () => this.now() } });
  }

  /** What to do with this request: answer from memory, wait for another request's answer, lead, or pass. */
  lookup(request: RequestLike): Lookup {
    const method = request.method;
    if ((method !== 'GET' && method !== 'HEAD') || !request.url.startsWith('/api/')) return { kind: 'pass' };
    for (const name of BYPASSING_REQUEST_HEADERS) if (request.headers[name] !== undefined) return { kind: 'pass' };
    // A HEAD is answered from the GET's entry (its headers without the body); it never leads.
    const key = PublicCache.keyOf(request.protocol, request.host, request.url);
    const answer = this.answers.get(key);
    if (answer) return { kind: 'hit', answer };
    if (method === 'HEAD' || this.passes.has(key)) return { kind: 'pass' };
    const pending = this.inflight.get(key);
    if (pending) return { kind: 'wait', answer: pending };
    let settle!: (answer: CachedAnswer | null) => void;
    const promise = new Promise<CachedAnswer | null>((resolve) => {
      settle = resolve;
    });
    this.inflight.set(key, promise);
    const generation = this.generation;
    let settled = false;
    return {
      kind: 'lead',
      ticket: {
        key,
        generation,
        settle: (result) => {
          if (settled) return;
          settled = true;
          if (this.inflight.get(key) === promise) this.inflight.delete(key);
          if (!result && generation === this.generation) this.passes.set(key, true);
          settle(result);
        },
      },
    };
  }

  /** The key of a request's answer: the full URL as the caller asked for it (protocol and host as the gateway reads them). */
  static keyOf(protocol: string, host: string, url: string): string {
    return `${protocol}://${host}${url}`;
  }

  /**
   * Whether a request for this key goes to the service with nothing for the cache to do: nothing
   * is kept for it, and a GET's key is known to answer something not to be shared (no request
   * leads or waits for it). The proxy fast path's question.
   */
  goesUpstream(method: string, key: string): boolean {
    if (this.answers.has(key)) return false;
    return method === 'HEAD' || this.passes.has(key);
  }

  /** The answer kept for this key, if any: no request leads or waits here (the fast path's question). */
  find(key: string): CachedAnswer | undefined {
    return this.answers.get(key);
  }

  /** Waits for a leader's answer, at most WAIT_LIMIT_MS. */
  static wait(answer: Promise<CachedAnswer | null>): Promise<CachedAnswer | null> {
    let timer: NodeJS.Timeout | undefined;
    const limit = new Promise<null>((resolve) => {
      timer = setTimeout(() => resolve(null), WAIT_LIMIT_MS);
      timer.unref();
    });
    return Promise.race([answer, limit]).finally(() => clearTimeout(timer));
  }

  /** How long this upstream answer may be kept (0: it passes through, unstored). */
  storableForMs(status: number, headers: IncomingHttpHeaders): number {
    const contentLength = Number(headers['content-length']);
    if (!Number.isSafeInteger(contentLength) || contentLength > this.maxEntryBytes) return 0;
    return storableForMs(status, headers, this.options.ttlMs);
  }

  /** Keeps a leader's answer (unless something changed since it asked) and hands it to its waiters. */
  store(ticket: CacheTicket, status: number, headers: IncomingHttpHeaders, body: Buffer, ttlMs: number, route: string): CachedAnswer {
    const kept: Record<string, string | string[]> = {};
    for (const [name, value] of Object.entries(withoutHopByHop(headers))) {
      if (value !== undefined && !NOT_REPLAYED.has(name)) kept[name] = value;
    }
    const now = this.now();
    const answer: CachedAnswer = { status, headers: kept, body, storedAt: now, route };
    if (ticket.generation === this.generation && now >= this.noStoreUntil) this.answers.set(ticket.key, answer, { ttl: ttlMs });
    ticket.settle?.(answer);
    return answer;
  }

  /** The Age header of an answer from memory (whole seconds since it was stored). */
  ageOf(answer: CachedAnswer): string {
    return String(Math.max(0, Math.floor((this.now() - answer.storedAt) / 1000)));
  }

  /**
   * Forgets everything: something changed. Requests already waiting for an upstream answer still
   * get it (they asked before the change was answered); new requests ask again. With `settle`,
   * nothing is stored for a while either: the change is applied by another service on its own
   * (evidence renames an author when identity's event reaches it), so an answer fetched just after
   * may not show it yet.
   */
  clear({ settle = false }: { settle?: boolean } = {}): void {
    this.generation++;
    if (settle) this.noStoreUntil = Math.max(this.noStoreUntil, this.now() + this.settleMs);
    this.answers.clear();
    this.passes.clear();
    this.inflight.clear();
  }

  get size(): number {
    return this.answers.size;
  }
}

/** The whole body of an upstream answer whose length is known and small. */
export async function readBody(stream: Readable, expectedLength: number): Promise<Buffer> {
  const chunks: Buffer[] = [];
  let length = 0;
  for await (const chunk of stream) {
    const buffer = Buffer.isBuffer(chunk) ? chunk : Buffer.from(chunk as Uint8Array);
    length += buffer.length;
    if (length > expectedLength) throw new Error('the upstream answer is longer than its Content-Length');
    chunks.push(buffer);
  }
  if (length !== expectedLength) throw new Error('the upstream answer ended before its Content-Length');
  return Buffer.concat(chunks, length);
}
