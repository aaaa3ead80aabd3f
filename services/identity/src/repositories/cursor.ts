/** Opaque page cursors: the sort key of the last item of a page, base64url-encoded JSON. */
export function encodeCursor(values: (string | number)[]): string {
  return Buffer.from(JSON.stringify(values)).toString('base64url');
}

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
