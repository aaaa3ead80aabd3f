import type { Request, Response } from 'express';

/** Announces the next page in an RFC 8288 Link header: <url>; rel="next". */
export function setNextLink(req: Request, res: Response, limit: number, nextCursor: string | null): void {
  if (!nextCursor) return;
  const url = new URL(req.originalUrl, 'http://portal.invalid');
  url.searchParams.set('limit', String(limit));
  url.searchParams.set('cursor', nextCursor);
  res.set('Link', `<${url.pathname}${url.search}>; rel="next"`);
}
