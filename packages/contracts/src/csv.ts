// CSV as the portal writes it, on the server (the audit log, the investigator export) and in the
// browser (the appointment import's result).
/**
 * One CSV line (RFC 4180: quotes doubled, CRLF). Every text cell is quoted, and every part of it
 * that a spreadsheet could take for a formula gets a leading apostrophe: the cell itself, and each
 * part behind a comma, a semicolon, a tab or a line break, so a spreadsheet that splits on ";" or
 * on tabs (the default in much of Europe), or that ignores the quotes, still never runs what a
 * participant typed. A part is a formula when it starts, after spaces, with = + - or @ (a cell
 * also when it starts with a tab or a carriage return); a signed number alone, such as the
 * "-74.00600 (±15 m)" of a position, is left as written. Numbers and booleans are written bare;
 * null and undefined as empty cells.
 */
export function csvLine(values: readonly (string | number | boolean | null | undefined)[]): string {
  return `${values.map(csvField).join(',')}\r\n`;
}

function csvField(value: string | number | boolean | null | undefined): string {
  if (value === null || value === undefined) return '';
  if (typeof value !== 'string') return String(value);
  return `"${neutralised(value).replace(/"/g, '""')}"`;
}

const SEPARATED_PARTS = /([,;\t\r\n])([^,;\t\r\n]*)/g;
const FORMULA_START = /^[ \u00a0]*[=+\-@]/;
const SIGNED_NUMBER = /^[ \u00a0]*[+-]\d+(?:\.\d+)?(?: \(±\d+ m\))?[ \u00a0]*$/;

function neutralised(text: string): string {
  const parts = text.replace(SEPARATED_PARTS, (whole, separator: string, part: string) =>
    FORMULA_START.test(part) && !SIGNED_NUMBER.test(part) ? `${separator}'${part}` : whole,
  );
  return /^[=+\-@\t\r]/.test(parts) ? `'${parts}` : parts;
}
