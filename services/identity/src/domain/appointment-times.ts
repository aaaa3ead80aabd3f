import { DateTime, IANAZone } from 'luxon';

/** True when the name is an IANA time zone this runtime knows (e.g. Europe/Berlin). */
export function isTimeZone(name: string): boolean {
  return IANAZone.isValidZone(name);
}

const WITH_TIME = /^\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}(:\d{2}(\.\d{1,3})?)?(Z|[+-]\d{2}(:?\d{2})?)?$/;

/**
 * A start time as written in a CSV file or a form: ISO 8601 date and time, with or without an
 * offset; without one it is read in `zone` (the event's IANA zone, daylight saving included).
 * Answers the instant as UTC ISO 8601, or null when it is no date and time.
 */
export function parseStart(input: string, zone: string): string | null {
  const text = input.trim();
  if (!WITH_TIME.test(text)) return null;
  const parsed = DateTime.fromISO(text.replace(' ', 'T'), { zone, setZone: false });
  if (!parsed.isValid) return null;
  // A wall time skipped by a daylight-saving change (02:30 on the spring night) does not exist:
  // Luxon moves it on; it is refused instead, so that nobody stands at the corner an hour off.
  if (!/(Z|[+-]\d{2}(:?\d{2})?)$/.test(text)) {
    const wall = text.replace(' ', 'T').slice(0, 16);
    if (parsed.setZone(zone).toFormat("yyyy-MM-dd'T'HH:mm") !== wall) return null;
  }
  return parsed.toUTC().toISO();
}

/** The instant as local time with its offset in the zone, e.g. 2026-07-01T18:30:00.000+02:00. */
export function inZone(utc: string, zone: string): string {
  return DateTime.fromISO(utc, { zone: 'utc' }).setZone(zone).toISO()!;
}

/** The UTC bounds [from, to) of a day (YYYY-MM-DD) in the zone, optionally narrowed to HH:mm times of it. */
export function dayBounds(date: string, zone: string, fromTime?: string, toTime?: string): { from: string; to: string } {
  const day = DateTime.fromISO(date, { zone }).startOf('day');
  const at = (time: string) => DateTime.fromISO(`${date}T${time}`, { zone });
  const from = fromTime ? at(fromTime) : day;
  const to = toTime ? at(toTime) : day.plus({ days: 1 });
  return { from: from.toUTC().toISO()!, to: to.toUTC().toISO()! };
}

/** The day (YYYY-MM-DD) an instant falls on in the zone. */
export function dayIn(instant: number, zone: string): string {
  return DateTime.fromMillis(instant, { zone }).toISODate()!;
}
