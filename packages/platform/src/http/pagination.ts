import type { Request, Response } from 'express';

/** Opaque page cursors: the sort key of the last item of a page, base64url-encoded JSON. */
export function encodeCursor(values: string[]): string {
  return Buffer.from(JSON.stringify(values)).toString('base64url');
}

/** The two-part sort key inside a cursor, or null for a cursor that was not made here. */
export function decodeCursor(cursor: string): [string, string] | null {
  try {
    const values = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8')) as unknown;
    if (Array.isArray(values) && values.length === 2 && values.every((value) => typeof value === 'string')) {
      return [values[0] as string, values[1] as string];
    }
  } catch {
    // fall through
  }
  return null;
}

/** Announces the next page in an RFC 8288 Link header: <url>; rel="next". */
export function setNextLink(req: Request, res: Response, limit: number, nextCursor: string | null): void {
  if (!nextCursor) return;
  const url = new URL(req.originalUrl, 'http://portal.invalid');
  url.searchParams.set('limit', String(limit));
  url.searchParams.set('cursor', nextCursor);
  res.set('Link', `<${url.pathname}${url.search}>; rel="next"`);
}
