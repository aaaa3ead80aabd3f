/**
 * One CSV line (RFC 4180: fields quoted when needed, quotes doubled, CRLF). A text field that a
 * spreadsheet would take for a formula (=, +, -, @, tab, carriage return first) gets a leading
 * apostrophe, so opening an export never runs what a participant typed.
 */
export function csvLine(values: readonly (string | number | boolean | null | undefined)[]): string {
  return `${values.map(csvField).join(',')}\r\n`;
}

function csvField(value: string | number | boolean | null | undefined): string {
  if (value === null || value === undefined) return '';
  if (typeof value !== 'string') return String(value);
  const safe = /^[=+\-@\t\r]/.test(value) ? `'${value}` : value;
  return /[",\r\n]/.test(safe) ? `"${safe.replace(/"/g, '""')}"` : safe;
}
