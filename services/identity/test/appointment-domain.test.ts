import { DateTime } from 'luxon';
import { describe, expect, it, vi } from 'vitest';
import { readAppointmentCsv } from '../src/domain/appointment-csv.js';
import { dayBounds, inZone, parseStart, readStart } from '../src/domain/appointment-times.js';
import { calendarFile, escapeText, foldLine } from '../src/domain/icalendar.js';
import { appointmentPhone, textablePhone } from '../src/domain/phone-numbers.js';

const NOW = Date.parse('2026-06-01T00:00:00Z');

describe('start times', () => {
  it('reads a time without offset in the event zone, across daylight saving, and keeps a given offset', () => {
    expect(parseStart('2026-07-01T18:30', 'Europe/Berlin')).toBe('2026-07-01T16:30:00.000Z');
    expect(parseStart('2026-12-01 18:30', 'Europe/Berlin')).toBe('2026-12-01T17:30:00.000Z');
    expect(parseStart('2026-07-01T18:30:00-04:00', 'Europe/Berlin')).toBe('2026-07-01T22:30:00.000Z');
    expect(parseStart('2026-07-01T18:30Z', 'America/New_York')).toBe('2026-07-01T18:30:00.000Z');
    expect(inZone('2026-07-01T16:30:00.000Z', 'Europe/Berlin')).toBe('2026-07-01T18:30:00.000+02:00');
  });

  it('refuses what is no date and time, and a wall time the spring change skips', () => {
    for (const bad of ['2026-13-01T10:00', '2026-07-01', 'tomorrow', '2026-07-01T25:00', '01/07/2026 18:30'])
      expect(parseStart(bad, 'Europe/Berlin'), bad).toBeNull();
    expect(parseStart('2026-03-29T02:30', 'Europe/Berlin')).toBeNull();
    expect(readStart('2026-03-29T02:30', 'Europe/Berlin')).toEqual({
      reason: 'bad-date',
      message: expect.stringMatching(/does not exist/),
    });
    // The hour after the change is there.
    expect(parseStart('2026-03-29T03:30', 'Europe/Berlin')).toBe('2026-03-29T01:30:00.000Z');
  });

  it('refuses a wall time the autumn change repeats as ambiguous, and takes it with its offset', () => {
    expect(readStart('2026-10-25T02:30', 'Europe/Berlin')).toEqual({
      reason: 'ambiguous-time',
      message: expect.stringContaining('2026-10-25T02:30+02:00 or 2026-10-25T02:30+01:00'),
    });
    expect(readStart('2026-11-01 01:30', 'America/New_York')).toMatchObject({ reason: 'ambiguous-time' });
    expect(parseStart('2026-10-25T02:30+01:00', 'Europe/Berlin')).toBe('2026-10-25T01:30:00.000Z');
    expect(parseStart('2026-10-25T02:30+02:00', 'Europe/Berlin')).toBe('2026-10-25T00:30:00.000Z');
    expect(parseStart('2026-10-25T03:30', 'Europe/Berlin')).toBe('2026-10-25T02:30:00.000Z');
  });

  it('refuses an offset beyond ±14:00', () => {
    expect(readStart('2026-07-01T18:30+14:30', 'UTC')).toMatchObject({ reason: 'bad-date', message: expect.stringMatching(/±14:00/) });
    expect(readStart('2026-07-01T18:30-1500', 'UTC')).toMatchObject({ reason: 'bad-date' });
    expect(parseStart('2026-07-01T18:30+14:00', 'UTC')).toBe('2026-07-01T04:30:00.000Z');
    expect(parseStart('2026-07-01T18:30-12:00', 'UTC')).toBe('2026-07-02T06:30:00.000Z');
  });

  it('reads an instant in a zone once (every poll of a call sheet asks for the same starts), and in another zone anew', () => {
    const reads = vi.spyOn(DateTime, 'fromISO');
    try {
      expect(inZone('2026-12-31T23:30:00.000Z', 'Pacific/Kiritimati')).toBe('2027-01-01T13:30:00.000+14:00');
      expect(inZone('2026-12-31T23:30:00.000Z', 'Pacific/Kiritimati')).toBe('2027-01-01T13:30:00.000+14:00');
      expect(reads).toHaveBeenCalledTimes(1);
      expect(inZone('2026-12-31T23:30:00.000Z', 'Pacific/Pago_Pago')).toBe('2026-12-31T12:30:00.000-11:00');
      expect(reads).toHaveBeenCalledTimes(2);
    } finally {
      reads.mockRestore();
    }
  });

  it("answers a day's bounds in the zone", () => {
    expect(dayBounds('2026-07-01', 'Europe/Berlin')).toEqual({ from: '2026-06-30T22:00:00.000Z', to: '2026-07-01T22:00:00.000Z' });
    expect(dayBounds('2026-07-01', 'Europe/Berlin', '18:00', '20:00')).toEqual({
      from: '2026-07-01T16:00:00.000Z',
      to: '2026-07-01T18:00:00.000Z',
    });
  });
});

describe('the CSV import', () => {
  it('reads columns by name in any order and case, quoted fields included, and numbers lines from the header', async () => {
    const csv =
      '\ufeffStart,EMAIL,note\r\n2026-07-01T18:30,A@Example.org,"north side, and a ""quote"""\r\n\r\n2026-07-01T19:00,b@example.org,\r\n';
    const { rows, refused } = await readAppointmentCsv(csv, 'Europe/Berlin', NOW);
    expect(refused).toEqual([]);
    expect(rows).toEqual([
      { line: 2, email: 'a@example.org', start: '2026-07-01T16:30:00.000Z', note: 'north side, and a "quote"' },
      { line: 4, email: 'b@example.org', start: '2026-07-01T17:00:00.000Z', note: '' },
    ]);
  });

  it('reports a record whose quoted cell spans lines at its first line, and refuses the line break a message would repeat', async () => {
    const csv =
      'email,start,note\n"a@example.org",2026-07-01T18:30,"two\nlines\nof note"\nb@example.org,2026-07-01T19:00,\nc@example.org,2026-07-01T20:00,"x\ny"\n';
    const { rows, refused } = await readAppointmentCsv(csv, 'UTC', NOW);
    expect(refused).toEqual([
      { line: 2, reason: 'bad-value', message: expect.stringMatching(/one line/) },
      { line: 6, reason: 'bad-value', message: expect.stringMatching(/one line/) },
    ]);
    expect(rows.map((row) => row.line)).toEqual([5]);
  });

  it('refuses an ambiguous autumn time as ambiguous-time, and a place with format characters', async () => {
    const csv = [
      'email,start,place',
      'a@example.org,2026-10-25T02:30,',
      'b@example.org,2026-10-25T02:30+01:00,',
      'c@example.org,2026-07-01T18:00,"A\u202eB"',
    ].join('\n');
    const { rows, refused } = await readAppointmentCsv(csv, 'Europe/Berlin', NOW);
    expect(refused.map(({ line, reason }) => [line, reason])).toEqual([
      [2, 'ambiguous-time'],
      [4, 'bad-value'],
    ]);
    expect(rows.map((row) => row.line)).toEqual([3]);
  });

  it('refuses lines with their reasons: bad date, duplicate, a value in no column, a bad address, a past start', async () => {
    const csv = [
      'email,start',
      'a@example.org,2026-07-01T18:30',
      'b@example.org,soon',
      'A@example.org,2026-07-02T18:30',
      'c@example.org,2026-07-01T18:30,extra',
      'not-an-address,2026-07-01T18:30',
      'd@example.org,2026-01-01T10:00',
    ].join('\n');
    const { rows, refused } = await readAppointmentCsv(csv, 'UTC', NOW);
    expect(rows.map((row) => row.line)).toEqual([2]);
    expect(refused.map(({ line, reason }) => [line, reason])).toEqual([
      [3, 'bad-date'],
      [4, 'duplicate'],
      [5, 'unknown-column'],
      [6, 'bad-email'],
      [7, 'in-the-past'],
    ]);
    expect(refused[1]!.message).toContain('line 2');
  });

  it("reads the ticket holder's name when the file has a name column, and refuses one too long or of several lines", async () => {
    const csv = [
      'email,NAME,start',
      'a@example.org,"Ñúñez, Zoë",2026-07-01T18:30',
      `b@example.org,${'x'.repeat(201)},2026-07-01T18:30`,
      'c@example.org,"Zoë\nURGENT: pay at http://example.com",2026-07-01T18:30',
    ].join('\n');
    const { rows, refused } = await readAppointmentCsv(csv, 'UTC', NOW);
    expect(rows).toEqual([{ line: 2, email: 'a@example.org', start: '2026-07-01T18:30:00.000Z', name: 'Ñúñez, Zoë' }]);
    expect(refused).toEqual([
      { line: 3, reason: 'bad-value', message: 'name must be at most 200 characters' },
      { line: 4, reason: 'bad-value', message: expect.stringContaining('The name must be one line of text') },
    ]);
  });

  it('refuses the whole file at line 1 for an unknown or missing column', async () => {
    expect((await readAppointmentCsv('email,start,seat\na@example.org,2026-07-01T18:30,4', 'UTC', NOW)).refused).toEqual([
      { line: 1, reason: 'unknown-column', message: expect.stringContaining('"seat"') },
    ]);
    expect((await readAppointmentCsv('email,phone\na@example.org,1', 'UTC', NOW)).refused).toEqual([
      { line: 1, reason: 'missing-field', message: expect.stringContaining('start') },
    ]);
    expect((await readAppointmentCsv('', 'UTC', NOW)).refused[0]!.reason).toBe('missing-field');
  });
});

describe('phone numbers', () => {
  it('normalises to E.164 in the default region, and says why a number cannot be texted', () => {
    expect(textablePhone('2025550123', 'US')).toEqual({
      e164: '+12025550123',
      toCall: '+12025550123',
      readable: '(202) 555-0123',
      problem: null,
    });
    expect(textablePhone('+49 151 23456789', 'US')).toEqual({
      e164: '+4915123456789',
      toCall: '+4915123456789',
      readable: '+49 1512 3456789',
      problem: null,
    });
    expect(textablePhone('5551234567', 'US')).toEqual({
      e164: null,
      toCall: '5551234567',
      readable: '5551234567',
      problem: expect.stringMatching(/not a valid phone number/),
    });
    expect(textablePhone('', 'US')).toEqual({
      e164: null,
      toCall: null,
      readable: null,
      problem: expect.stringMatching(/no phone number/i),
    });
  });

  it('keeps a landline to call, with texts off and the reason in words', () => {
    expect(textablePhone('030 12345678', 'DE')).toEqual({
      e164: null,
      toCall: '+493012345678',
      readable: '030 12345678',
      problem: 'not a mobile number (a fixed line cannot take text messages)',
    });
  });

  it('reads a number once per region (every poll of a call sheet names the same ones), and another region reads it anew', () => {
    const berlin = textablePhone('030 12345678', 'DE');
    // The same answer, shared by every caller: frozen, so that none can change it for the others.
    expect(textablePhone('030 12345678', 'DE')).toBe(berlin);
    expect(Object.isFrozen(berlin)).toBe(true);
    expect(textablePhone('030 12345678', 'US')).toEqual({
      e164: null,
      toCall: '030 12345678',
      readable: '030 12345678',
      problem: expect.stringMatching(/not a valid phone number \(read in region US\)/),
    });
    expect(textablePhone('030 12345678', 'DE')).toEqual(berlin);
    expect(appointmentPhone('030 12345678', '', 'DE')).toEqual({ ...berlin, from: 'box-office' });
  });

  it("is the box office's number when it gave one, else the profile's, and says whose", () => {
    expect(appointmentPhone('030 12345678', '+4915123456789', 'DE')).toMatchObject({
      toCall: '+493012345678',
      readable: '030 12345678',
      e164: null,
      from: 'box-office',
    });
    expect(appointmentPhone('', '0151 23456789', 'DE')).toMatchObject({
      toCall: '+4915123456789',
      readable: '01512 3456789',
      e164: '+4915123456789',
      from: 'profile',
    });
    expect(appointmentPhone(' ', '', 'DE')).toMatchObject({ toCall: null, readable: null, e164: null, from: null });
  });
});

describe('iCalendar', () => {
  it('escapes text, folds long lines at 75 octets without splitting a character, and ends every line with CRLF', () => {
    expect(escapeText('a;b,c\\d\ne')).toBe('a\\;b\\,c\\\\d\\ne');
    const folded = foldLine(`DESCRIPTION:${'é'.repeat(100)}`);
    for (const line of folded.split('\r\n')) expect(Buffer.byteLength(line)).toBeLessThanOrEqual(75);
    expect(
      folded
        .split('\r\n')
        .map((line, index) => (index === 0 ? line : line.slice(1)))
        .join(''),
    ).toBe(`DESCRIPTION:${'é'.repeat(100)}`);
    const file = calendarFile(
      {
        uid: 'x@portal',
        sequence: 1,
        start: '2026-07-01T16:30:00.000Z',
        minutes: 30,
        summary: 'S',
        location: 'Main St, 1st Ave',
        description: 'D',
        alarmMinutesBefore: 120,
        stamp: '2026-06-01T00:00:00.000Z',
      },
      '-//Test//EN',
    );
    expect(file).toMatch(/^BEGIN:VCALENDAR\r\n/);
    expect(file).toContain('DTSTART:20260701T163000Z\r\nDTEND:20260701T170000Z\r\n');
    expect(file).toContain('LOCATION:Main St\\, 1st Ave\r\n');
    expect(file).toContain('BEGIN:VALARM\r\nACTION:DISPLAY\r\nDESCRIPTION:S\r\nTRIGGER:-PT120M\r\nEND:VALARM\r\n');
    expect(file.replace(/\r\n/g, '')).not.toMatch(/[\r\n]/);
  });
});
