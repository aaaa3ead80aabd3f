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
