// The call sheet's and the import's words (web/src/pages/admin/appointment-words.ts, ImportResultTable.tsx):
// messages in the order they go out, states and refusals in words (a state or reason the server
// adds later still reads), and an import's lines in the file's order.
import { describe, expect, it } from 'vitest';
import type { AppointmentDelivery, AppointmentImportResult } from '@portal/contracts';
import { channelsInWords, inSendingOrder, messageInWords, outcomeInWords, refusalInWords } from '../src/pages/admin/appointment-words';
import { countsInWords, countsOf, importLines } from '../src/pages/admin/ImportResultTable';

const delivery = (key: string, fields: Partial<AppointmentDelivery>): AppointmentDelivery => ({
  key,
  kind: 'reminder',
  offset: null,
  channel: 'email',
  state: 'sent',
  at: '2026-07-01T10:00:00.000Z',
  reason: null,
  ...fields,
});

describe('message words', () => {
  it('lists the confirmation first, then reminders from the earliest, then announcements; e-mail before text', () => {
    const deliveries = [
      delivery('announce:sms', { kind: 'announcement', channel: 'sms' }),
      delivery('2h:sms', { offset: '2h', channel: 'sms' }),
      delivery('2h:email', { offset: '2h' }),
      delivery('24h:email', { offset: '24h' }),
      delivery('90m:email', { offset: '90m' }),
      delivery('confirmation:sms', {
        kind: 'confirmation',
        channel: 'sms',
        state: 'not-sent',
        reason: 'not a mobile number (a fixed line cannot take text messages)',
      }),
      delivery('confirmation:email', { kind: 'confirmation' }),
    ];
    expect(inSendingOrder(deliveries).map((entry) => `${messageInWords(entry)}: ${outcomeInWords(entry)}`)).toEqual([
      'Confirmation by e-mail: Sent',
      'Confirmation by text: Not sent: not a mobile number (a fixed line cannot take text messages)',
      '24h reminder by e-mail: Sent',
      '2h reminder by e-mail: Sent',
      '2h reminder by text: Sent',
      '90m reminder by e-mail: Sent',
      'Announcement by text: Sent',
    ]);
  });

  it('says a message is tried again while its provider is away, and why', () => {
    expect(
      outcomeInWords(
        delivery('confirmation', {
          state: 'retrying',
          reason: "the mail server is not answering (connect ECONNREFUSED); tried again until the appointment's start",
        }),
      ),
    ).toBe("Trying again: the mail server is not answering (connect ECONNREFUSED); tried again until the appointment's start");
  });

  it('gives a state or a refusal the server adds later its own name in words', () => {
    expect(outcomeInWords(delivery('x', { state: 'dropped' as AppointmentDelivery['state'], reason: 'the appointment had started' }))).toBe(
      'Dropped: the appointment had started',
    );
    expect(refusalInWords('bad-date')).toBe('Not a date and time');
    expect(refusalInWords('ambiguous-time')).toBe('The time happens twice');
    expect(refusalInWords('too-many-lines')).toBe('Too many lines');
  });
});

describe('announcement words', () => {
  it('says by text only for those a text can reach', () => {
    expect(channelsInWords(3, 3)).toBe('each by e-mail and by text');
    expect(channelsInWords(3, 1)).toBe('each by e-mail, and 1 of them by text too');
    expect(channelsInWords(2, 0)).toBe('each by e-mail (none of them by text: no mobile number, or texts turned off)');
  });
});

describe('import lines', () => {
  it("puts every line in the file's order with its outcome, a move apart from an update", () => {
    const result: AppointmentImportResult = {
      dry_run: true,
      time_zone: 'Europe/Berlin',
      created: [{ line: 4, email: 'c@example.org', id: null, name: 'C', start: '2026-07-01T18:00:00.000+02:00' }],
      updated: [
        {
          line: 2,
          email: 'm@example.org',
          id: 'm',
          name: '',
          start: '2026-07-01T19:00:00.000+02:00',
          moved: true,
          previous_start: '2026-07-01T18:00:00.000+02:00',
        },
        {
          line: 3,
          email: 'u@example.org',
          id: 'u',
          name: '',
          start: '2026-07-01T18:00:00.000+02:00',
          moved: false,
          previous_start: '2026-07-01T18:00:00.000+02:00',
        },
      ],
      unchanged: [],
      refused: [{ line: 5, reason: 'bad-date', message: '"soon" is not a date and time' }],
    };
    const lines = importLines(result);
    expect(lines.map(({ line, outcome, previousStart }) => [line, outcome, previousStart])).toEqual([
      [2, 'moved', '2026-07-01T18:00:00.000+02:00'],
      [3, 'updated', null],
      [4, 'created', null],
      [5, 'refused', null],
    ]);
    expect(countsInWords(countsOf(lines))).toBe('1 created, 1 moved, 1 updated, 1 refused');
  });
});
