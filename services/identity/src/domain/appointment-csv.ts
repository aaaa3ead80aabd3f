import { parse } from 'csv-parse';
import {
  appointmentPhoneField,
  boxOfficeNameField,
  emailField,
  noteField,
  placeField,
  type AppointmentImportResult,
} from '@portal/contracts';
import { TimeSlices } from '@portal/platform';
import { readStart } from './appointment-times.js';

export const CSV_COLUMNS = ['email', 'start', 'name', 'phone', 'place', 'note'] as const;
type Column = (typeof CSV_COLUMNS)[number];
const REQUIRED: Column[] = ['email', 'start'];
/** How much of the file the parser is given at once (a slice of work of a few milliseconds). */
const CHUNK_CHARS = 16 * 1024;

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

interface CsvRecord {
  record: string[];
  /** The line the record starts on (the header is line 1): a quoted cell may span lines. */
  line: number;
}

/**
 * The records of the file, read by csv-parse's stream in chunks with a turn of the event loop
 * between them (a 2 MB file never holds the process more than a slice), each with the line it
 * starts on: csv-parse counts the line a record ends on, and a quoted cell may hold line breaks.
 */
async function records(text: string, slices: TimeSlices): Promise<CsvRecord[] | Refusal> {
  const parser = parse({ bom: true, trim: true, skip_empty_lines: true, relax_column_count: true, info: true, raw: true });
  const out: CsvRecord[] = [];
  let failure: Refusal | undefined;
  parser.on('readable', () => {
    for (let item = parser.read() as { record: string[]; info: { lines: number }; raw: string } | null; item; item = parser.read()) {
      // The raw text holds the empty lines skipped before the record and its own line ending: neither counts.
      const own = item.raw.replace(/^(?:[ \t]*(?:\r\n|\r|\n))+/, '').replace(/(?:\r\n|\r|\n)$/, '');
      const breaks = own.match(/\r\n|\r|\n/g)?.length ?? 0;
      out.push({ record: item.record, line: item.info.lines - breaks });
    }
  });
  parser.on('error', (error: Error & { lines?: number }) => {
    failure = { line: error.lines ?? 1, reason: 'bad-value', message: `The file is not readable CSV: ${error.message}` };
  });
  const ended = new Promise<void>((resolve) => {
    parser.on('end', resolve);
    parser.on('error', () => resolve());
  });
  for (let at = 0; at < text.length && !failure; at += CHUNK_CHARS) {
    // Each chunk parsed before the next is given: chunks written without waiting are buffered by
    // the stream and then parsed all in one go, when its records are read (bench/import saw a
    // 2 MB file hold the process 70 ms that way).
    const parsed = new Promise<void>((resolve) => parser.write(text.slice(at, at + CHUNK_CHARS), () => resolve()));
    await Promise.race([parsed, ended]);
    await slices.maybeYield();
  }
  if (!failure) parser.end();
  await ended;
  return failure ?? out;
}

/**
 * Reads the box office's CSV (csv-parse: quoted fields, commas and line breaks inside quotes,
 * a byte-order mark): the header names the columns (email and start required; name, phone, place,
 * note optional; any order, any case). Answers the rows to apply and the refused lines, each with the
 * line it starts on in the file (the header is line 1) and why. A header that cannot be used
 * refuses the whole file (line 1). Addresses, names, places and notes are held to the same shared
 * fields as every other way in (one address, one line of text); times to readStart's rules. The
 * work is done in slices (`slices`): other requests are answered while a large file is read.
 */
export async function readAppointmentCsv(
  text: string,
  zone: string,
  now: number,
  slices = new TimeSlices(),
): Promise<{ rows: CsvAppointment[]; refused: Refusal[] }> {
  const read = await records(text, slices);
  if (!Array.isArray(read)) return { rows: [], refused: [read] };
  const [header, ...body] = read;
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
          line: header.line,
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
          line: header.line,
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
      refused: [{ line: header.line, reason: 'duplicate', message: `The column "${repeated[0]}" is named twice in the header` }],
    };
  }

  const rows: CsvAppointment[] = [];
  const refused: Refusal[] = [];
  const seen = new Map<string, number>();
  for (const { record, line } of body) {
    await slices.maybeYield();
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
      refused.push({ line, reason: 'bad-email', message: `"${cell('email') ?? ''}" is not one e-mail address` });
      continue;
    }
    const startText = cell('start') ?? '';
    if (!startText) {
      refused.push({ line, reason: 'missing-field', message: 'The start is empty' });
      continue;
    }
    const start = readStart(startText, zone);
    if (!('start' in start)) {
      refused.push({ line, reason: start.reason, message: start.message });
      continue;
    }
    if (Date.parse(start.start) <= now) {
      refused.push({ line, reason: 'in-the-past', message: `${startText} has passed` });
      continue;
    }
    const first = seen.get(email.data);
    if (first !== undefined) {
      refused.push({ line, reason: 'duplicate', message: `${email.data} already has an appointment on line ${first} of this file` });
      continue;
    }
    // The shared fields (the forms' place, note and phone too): the same limits, one line of text each.
    const name = boxOfficeNameField.optional().safeParse(cell('name'));
    const phone = appointmentPhoneField.optional().safeParse(cell('phone'));
    const place = placeField.optional().safeParse(cell('place'));
    const note = noteField.optional().safeParse(cell('note'));
    const invalid = [name, phone, place, note].find((parsed) => !parsed.success);
    if (invalid) {
      refused.push({ line, reason: 'bad-value', message: invalid.error?.issues[0]?.message ?? 'A value is not accepted' });
      continue;
    }
    seen.set(email.data, line);
    rows.push({
      line,
      email: email.data,
      start: start.start,
      ...(name.data !== undefined ? { name: name.data } : {}),
      ...(phone.data !== undefined ? { phone: phone.data } : {}),
      ...(place.data !== undefined ? { place: place.data } : {}),
      ...(note.data !== undefined ? { note: note.data } : {}),
    });
  }
  return { rows, refused };
}
