import type { IncomingHttpHeaders } from 'node:http';

/** One entity tag of an If-None-Match list, compared weakly (RFC 9110 13.1.2: W/ is ignored). */
const opaqueTag = (tag: string) => tag.trim().replace(/^W\//, '');

/**
 * Whether a GET or HEAD may be answered 304 Not Modified (RFC 9110 13.1.2 and 13.1.3): the
 * representation's ETag is among If-None-Match's (or it says *); without If-None-Match, it has not
 * changed since If-Modified-Since. Unlike express's req.fresh, a request's `Cache-Control:
 * no-cache` does not turn the check off: that directive is for caches on the way, and fetch()
 * sends it with every conditional request it is given.
 */
export function isNotModified(headers: IncomingHttpHeaders, representation: { etag: string; lastModified?: Date }): boolean {
  const ifNoneMatch = headers['if-none-match'];
  if (ifNoneMatch !== undefined) {
    if (ifNoneMatch.trim() === '*') return true;
    const current = opaqueTag(representation.etag);
    return ifNoneMatch.split(',').some((tag) => opaqueTag(tag) === current);
  }
  const ifModifiedSince = headers['if-modified-since'];
  if (ifModifiedSince === undefined || !representation.lastModified) return false;
  const since = Date.parse(ifModifiedSince);
  // HTTP dates have whole seconds.
  return Number.isFinite(since) && Math.floor(representation.lastModified.getTime() / 1000) * 1000 <= since;
}
