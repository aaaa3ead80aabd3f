import { parsePhoneNumberFromString, type CountryCode } from 'libphonenumber-js/max';
import { LRUCache } from 'lru-cache';

export interface TextablePhone {
  /** E.164, e.g. +12025550123; null when the number cannot be texted. */
  e164: string | null;
  /** The number to call: E.164 when valid, whether or not it takes texts (a landline too), else as given; null when there is none. */
  toCall: string | null;
  /** That number spaced for reading: national form in the default region ("(202) 555-0123"), else international ("+49 30 12345678"); as given when not valid. */
  readable: string | null;
  /** Why it cannot be texted, for the call sheet and the message records; null when it can. */
  problem: string | null;
}

/** Number types that take text messages (in North America most numbers are both fixed and mobile). */
const TEXTABLE = new Set(['MOBILE', 'FIXED_LINE_OR_MOBILE', 'PERSONAL_NUMBER']);

/**
 * What textablePhone made of each number, by region and number: reading one with the full
 * metadata takes about 55 µs, most of the time of a large call sheet, which every performer's
 * Today screen asks for again every few seconds with the same numbers (bench/import). A few days'
 * numbers fit; the least recently read go first. The answers are frozen, shared by every caller.
 */
const READ_NUMBERS = new LRUCache<string, Readonly<TextablePhone>, { input: string; region: string }>({
  max: 20_000,
  memoMethod: (_key, _stale, { context }) => Object.freeze(readPhone(context.input, context.region)),
});

/**
 * Normalises a phone number to E.164 with libphonenumber-js (full metadata, so that landlines are
 * told apart); a number without a country code is read in `region` (SMS_DEFAULT_REGION). A valid
 * number that cannot take texts (a landline) is still one to call.
 */
export function textablePhone(input: string, region: string): Readonly<TextablePhone> {
  return READ_NUMBERS.memo(`${region} ${input}`, { context: { input, region } });
}

function readPhone(input: string, region: string): TextablePhone {
  const text = input.trim();
  if (!text) return { e164: null, toCall: null, readable: null, problem: 'no phone number is on file' };
  const parsed = parsePhoneNumberFromString(text, region as CountryCode);
  if (!parsed || !parsed.isValid())
    return { e164: null, toCall: text, readable: text, problem: `"${text}" is not a valid phone number (read in region ${region})` };
  const toCall = {
    toCall: parsed.number,
    readable: parsed.country === region ? parsed.formatNational() : parsed.formatInternational(),
  };
  const type = parsed.getType();
  if (type !== undefined && !TEXTABLE.has(type)) {
    const kind = type === 'FIXED_LINE' ? 'a fixed line' : `a ${type.toLowerCase().replace(/_/g, ' ')} number`;
    return { e164: null, ...toCall, problem: `not a mobile number (${kind} cannot take text messages)` };
  }
  return { e164: parsed.number, ...toCall, problem: null };
}

export interface AppointmentPhone extends TextablePhone {
  /** Whose number it is: the box office gave it with the appointment, or the participant's profile; null when there is none. */
  from: 'box-office' | 'profile' | null;
}

/**
 * An appointment's number: the box office's when it gave one, else the profile's (the holder's,
 * never an unconfirmed account's: the caller passes '' then). The one number the performers call,
 * that messages, calendar files, the home page and the call sheet name, and that texts go to when
 * it can take them.
 */
export function appointmentPhone(boxOffice: string, profile: string, region: string): AppointmentPhone {
  const fromBoxOffice = boxOffice.trim() !== '';
  const from = fromBoxOffice ? 'box-office' : profile.trim() ? 'profile' : null;
  return { ...textablePhone(fromBoxOffice ? boxOffice : profile, region), from };
}
