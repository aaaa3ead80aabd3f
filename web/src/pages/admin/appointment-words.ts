import {
  type IMPORT_REFUSALS,
  parseReminderOffsets,
  type AdminAppointment,
  type AppointmentDelivery,
  type AppointmentStatus,
} from '@portal/contracts';

/** The performers' statuses in words. */
export const STATUS_LABELS: Record<AppointmentStatus, string> = {
  waiting: 'Waiting',
  called: 'Called',
  arrived: 'Arrived',
  'no-show': 'No-show',
};

type AddressStatus = AdminAppointment['address_status'];

/**
 * Why an appointment is still pending under its address, as the call sheet says it beside the
 * box office's name (one whose address an account confirmed is that account's: nothing to say).
 */
export const PENDING_LABELS: Record<Exclude<AddressStatus, 'confirmed'>, string> = {
  'not-confirmed': 'Registered, address not confirmed yet',
  'no-account': 'Not registered yet',
};

/** What the address's status means for the appointment, in a sentence (the user dialog). */
export const ADDRESS_STATUS_WORDS: Record<AddressStatus, string> = {
  confirmed: 'Address confirmed: the appointment is this account’s (its name, photo and number).',
  'not-confirmed':
    'Address not confirmed yet: the appointment waits under the address. Messages go to the address and only a number the box office gave is used, until the account opens the link in its e-mail.',
  'no-account': 'No account has confirmed this address: the appointment waits under it.',
};

/** What became of a message, in words; a state the server adds later still reads (its own name). */
const STATE_WORDS: Record<string, string> = { sent: 'Sent', 'not-sent': 'Not sent', failed: 'Failed', retrying: 'Trying again' };

const capitalised = (text: string) => text.charAt(0).toUpperCase() + text.slice(1);

/** A state as words: "Not sent", or an unknown state's name ("dropped" reads "Dropped"). */
export function stateInWords(state: string): string {
  return STATE_WORDS[state] ?? capitalised(state.replace(/-/g, ' '));
}

/** Which message it was: "Confirmation by e-mail", "24h reminder by text", "Announcement by text". */
export function messageInWords(delivery: Pick<AppointmentDelivery, 'kind' | 'offset' | 'channel'>): string {
  const what =
    delivery.kind === 'confirmation'
      ? 'Confirmation'
      : delivery.kind === 'announcement'
        ? 'Announcement'
        : `${delivery.offset ?? ''} reminder`;
  return `${what} by ${delivery.channel === 'sms' ? 'text' : 'e-mail'}`;
}

/** "Not sent: not a mobile number (a fixed line cannot take text messages)", or "Sent". */
export function outcomeInWords(delivery: Pick<AppointmentDelivery, 'state' | 'reason'>): string {
  return `${stateInWords(delivery.state)}${delivery.reason ? `: ${delivery.reason}` : ''}`;
}

const offsetMs = (offset: string | null) => {
  try {
    return offset ? (parseReminderOffsets(offset)[0]?.ms ?? 0) : 0;
  } catch {
    return 0;
  }
};
const KIND_ORDER: Record<string, number> = { confirmation: 0, reminder: 1, announcement: 2 };
const kindOrder = (kind: string) => KIND_ORDER[kind] ?? 3;

/**
 * The messages of an appointment in the order they go out: the confirmation, the reminders from
 * the earliest (the largest offset) to the last, then announcements; e-mail before text.
 */
export function inSendingOrder<T extends Pick<AppointmentDelivery, 'kind' | 'offset' | 'channel' | 'at'>>(deliveries: readonly T[]): T[] {
  return [...deliveries].sort(
    (a, b) =>
      kindOrder(a.kind) - kindOrder(b.kind) ||
      offsetMs(b.offset) - offsetMs(a.offset) ||
      (a.kind === 'announcement' ? a.at.localeCompare(b.at) : 0) ||
      (a.channel === b.channel ? 0 : a.channel === 'email' ? -1 : 1),
  );
}

/** Why the box office's line was refused, in words (the server's sentence follows). */
export const REFUSAL_WORDS: Record<(typeof IMPORT_REFUSALS)[number], string> = {
  'bad-date': 'Not a date and time',
  'unknown-column': 'Unknown column',
  duplicate: 'Address given twice',
  'missing-field': 'Something is missing',
  'bad-email': 'Not an e-mail address',
  'bad-value': 'A value is not accepted',
  'in-the-past': 'The time has passed',
  'ambiguous-time': 'The time happens twice',
};

export function refusalInWords(reason: string): string {
  return (REFUSAL_WORDS as Record<string, string>)[reason] ?? capitalised(reason.replace(/-/g, ' '));
}

/**
 * How the announcement travels: by e-mail to each, by text to those a text can reach (the
 * server counts them by the rule the notifier sends by: a mobile number, texts not turned off).
 */
export function channelsInWords(recipients: number, byText: number): string {
  if (byText >= recipients) return 'each by e-mail and by text';
  if (byText === 0) return 'each by e-mail (none of them by text: no mobile number, or texts turned off)';
  return `each by e-mail, and ${byText} of them by text too`;
}
