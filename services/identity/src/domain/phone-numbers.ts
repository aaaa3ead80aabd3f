import { parsePhoneNumberFromString, type CountryCode } from 'libphonenumber-js/max';

export interface TextablePhone {
  /** E.164, e.g. +12025550123; null when the number cannot be texted. */
  e164: string | null;
  /** Why it cannot be texted, for the call sheet; null when it can. */
  problem: string | null;
}

/** Number types that take text messages (in North America most numbers are both fixed and mobile). */
const TEXTABLE = new Set(['MOBILE', 'FIXED_LINE_OR_MOBILE', 'PERSONAL_NUMBER']);

/**
 * Normalises a phone number to E.164 with libphonenumber-js (full metadata, so that landlines are
 * told apart); a number without a country code is read in `region` (SMS_DEFAULT_REGION).
 */
export function textablePhone(input: string, region: string): TextablePhone {
  const text = input.trim();
  if (!text) return { e164: null, problem: 'No phone number is on file' };
  const parsed = parsePhoneNumberFromString(text, region as CountryCode);
  if (!parsed || !parsed.isValid()) return { e164: null, problem: `"${text}" is not a valid phone number (read in region ${region})` };
  const type = parsed.getType();
  if (type !== undefined && !TEXTABLE.has(type)) {
    return { e164: null, problem: `${parsed.number} is a ${type.toLowerCase().replace(/_/g, ' ')} number: it cannot take text messages` };
  }
  return { e164: parsed.number, problem: null };
}

export interface NumberToCall {
  /** E.164 when the number is valid (a landline too), else as it was given; null when there is none. */
  number: string | null;
  /** Whose it is: the box office gave it with the appointment, or the participant's profile. */
  from: 'box-office' | 'profile' | null;
}

/**
 * The number the performers will call: the box office's when it gave one, else the profile's.
 * Messages and calendar files name it, so that the participant knows which phone to carry.
 */
export function numberToCall(boxOffice: string, profile: string, region: string): NumberToCall {
  const given = boxOffice.trim()
    ? { text: boxOffice.trim(), from: 'box-office' as const }
    : { text: profile.trim(), from: 'profile' as const };
  if (!given.text) return { number: null, from: null };
  const parsed = parsePhoneNumberFromString(given.text, region as CountryCode);
  return { number: parsed?.isValid() ? parsed.number : given.text, from: given.from };
}
