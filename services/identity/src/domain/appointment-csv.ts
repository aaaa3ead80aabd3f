import { parse } from 'csv-parse/sync';
import { emailField, type AppointmentImportResult } from '@portal/contracts';
import { parseStart } from './appointment-times.js';

export const CSV_COLUMNS = ['email', 'start', 'name', 'phone', 'place', 'note'] as const;
type Column = (typeof CSV_COLUMNS)[number];
const REQUIRED: Column[] = ['email', 'start'];
/** The longest value of each optional column (as the forms take them). */
const MAX_LENGTH = { name: 200, place: 200, note: 500, phone: 40 } as const;

export interface CsvAppointment {
  line: number;
  email: string;
  /** UTC ISO 8601. */
  start: string;
  /** The ticket holder's name as the box office has it (shown on the call sheet until they register). */
  name?: string;
  phone?: string;
  place?: string;
  note?: string;
}

export type Refusal = AppointmentImportResult['refused'][number];

/**
 * Reads the box office's CSV (csv-parse: quoted fields, commas and line breaks inside quotes,
 * a byte-order mark): the header names the columns (email and start required; name, phone, place,
 * note optional; any order, any case). Answers the rows to apply and the refused lines, each with its
 * line number in the file (the header is line 1) and why. A header that cannot be used refuses
 * the whole file (line 1).
 */
export function readAppointmentCsv(text: string, zone: string, now: number): { rows: CsvAppointment[]; refused: Refusal[] } {
  let records: { record: string[]; info: { lines: number } }[];
  try {
    records = parse(text, { bom: true, trim: true, skip_empty_lines: true, relax_column_count: true, info: true }) as never;
  } catch (error) {
    const line = (error as { lines?: number }).lines ?? 1;
    return { rows: [], refused: [{ line, reason: 'bad-value', message: `The file is not readable CSV: ${(error as Error).message}` }] };
  }
  const [header, ...body] = records;
  if (!header)
    return {
      rows: [],
      refused: [
        { line: 1, reason: 'missing-field', message: 'The file is empty: it needs a header line naming the columns, e.g. email,start' },
      ],
    };
  const names = header.record.map((name) => name.trim().toLowerCase());
  const unknown = names.filter((name) => !(CSV_COLUMNS as readonly string[]).includes(name));
  if (unknown.length > 0) {
    return {
      rows: [],
      refused: [
        {
          line: header.info.lines,
          reason: 'unknown-column',
          message: `Unknown column ${unknown.map((name) => `"${name}"`).join(', ')}: the columns are ${CSV_COLUMNS.join(', ')}`,
        },
      ],
    };
  }
  const missing = REQUIRED.filter((name) => !names.includes(name));
  if (missing.length > 0) {
    return {
      rows: [],
      refused: [
        {
          line: header.info.lines,
          reason: 'missing-field',
          message: `The header needs the column${missing.length > 1 ? 's' : ''} ${missing.join(' and ')}`,
        },
      ],
    };
  }
  const repeated = names.filter((name, index) => names.indexOf(name) !== index);
  if (repeated.length > 0) {
    return {
      rows: [],
      refused: [{ line: header.info.lines, reason: 'duplicate', message: `The column "${repeated[0]}" is named twice in the header` }],
    };
  }

  const rows: CsvAppointment[] = [];
  const refused: Refusal[] = [];
  const seen = new Map<string, number>();
  for (const { record, info } of body) {
    // csv-parse counts the line a record ends on; a record spanning lines starts earlier.
    const line = info.lines;
    if (record.length > names.length && record.slice(names.length).some((cell) => cell !== '')) {
      refused.push({
        line,
        reason: 'unknown-column',
        message: `This line has ${record.length} values but the header names ${names.length} columns`,
      });
      continue;
    }
    const cell = (name: Column) => {
      const index = names.indexOf(name);
      return index === -1 ? undefined : (record[index] ?? '').trim();
    };
    const email = emailField.safeParse(cell('email') ?? '');
    if (!email.success) {
      refused.push({ line, reason: 'bad-email', message: `"${cell('email') ?? ''}" is not an e-mail address` });
      continue;
    }
    const startText = cell('start') ?? '';
    if (!startText) {
      refused.push({ line, reason: 'missing-field', message: 'The start is empty' });
      continue;
    }
    const start = parseStart(startText, zone);
    if (!start) {
      refused.push({
        line,
        reason: 'bad-date',
        message: `"${startText}" is not a date and time such as 2026-07-01T18:30 (times without an offset are read in ${zone})`,
      });
      continue;
    }
    if (Date.parse(start) <= now) {
      refused.push({ line, reason: 'in-the-past', message: `${startText} has passed` });
      continue;
    }
    const first = seen.get(email.data);
    if (first !== undefined) {
      refused.push({ line, reason: 'duplicate', message: `${email.data} already has an appointment on line ${first} of this file` });
      continue;
    }
    const long = (Object.keys(MAX_LENGTH) as (keyof typeof MAX_LENGTH)[]).find((name) => (cell(name)?.length ?? 0) > MAX_LENGTH[name]);
    if (long) {
      refused.push({ line, reason: 'bad-value', message: `The ${long} is too long (at most ${MAX_LENGTH[long]} characters)` });
      continue;
    }
    seen.set(email.data, line);
    const name = cell('name');
    const phone = cell('phone');
    const place = cell('place');
    const note = cell('note');
    rows.push({
      line,
      email: email.data,
      start,
      ...(name !== undefined ? { name } : {}),
      ...(phone !== undefined ? { phone } : {}),
      ...(place !== undefined ? { place } : {}),
      ...(note !== undefined ? { note } : {}),
    });
  }
  return { rows, refused };
}
