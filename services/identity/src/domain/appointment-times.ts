import { LRUCache } from 'lru-cache';
import { DateTime, FixedOffsetZone, IANAZone } from 'luxon';

/** True when the name is an IANA time zone this runtime knows (e.g. Europe/Berlin). */
export function isTimeZone(name: string): boolean {
  return IANAZone.isValidZone(name);
}

const WITH_TIME = /^\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}(:\d{2}(\.\d{1,3})?)?(Z|[+-]\d{2}(:?\d{2})?)?$/;
const OFFSET = /(Z|([+-])(\d{2}):?(\d{2})?)$/;
/** The farthest offsets any zone uses: UTC-12:00 and UTC+14:00 (Kiribati). */
const MAX_OFFSET_MINUTES = 14 * 60;

export type StartReading = { start: string } | { reason: 'bad-date' | 'ambiguous-time'; message: string };

/**
 * A start time as written in a CSV file or a form: ISO 8601 date and time, with or without an
 * offset; without one it is read in `zone` (the event's IANA zone, daylight saving included).
 * Answers the instant as UTC ISO 8601, or why it cannot be read:
 * - an offset beyond ±14:00 is no place on Earth (bad-date);
 * - a wall time that the spring daylight-saving change skips (02:30 on that night in Europe)
 *   does not exist: Luxon would move it on an hour; it is refused instead (bad-date), so that
 *   nobody stands at the corner an hour off;
 * - a wall time that happens twice (02:30 on the autumn night, once in summer time and once in
 *   winter time) is refused as ambiguous-time: write it with its offset (02:30+02:00 or +01:00).
 */
export function readStart(input: string, zone: string): StartReading {
  const text = input.trim();
  const notATime = `"${text}" is not a date and time such as 2026-07-01T18:30 (times without an offset are read in ${zone})`;
  if (!WITH_TIME.test(text)) return { reason: 'bad-date', message: notATime };
  const offset = OFFSET.exec(text);
  if (offset?.[2] && Number(offset[3]) * 60 + Number(offset[4] ?? 0) > MAX_OFFSET_MINUTES)
    return { reason: 'bad-date', message: `"${text}" has an offset beyond ±14:00, which no place on Earth uses` };
  const parsed = DateTime.fromISO(text.replace(' ', 'T'), { zone, setZone: false });
  if (!parsed.isValid) return { reason: 'bad-date', message: notATime };
  if (offset) return { start: parsed.toUTC().toISO()! };
  // Without an offset: every instant whose wall time in the zone is the one written.
  const wall = text.replace(' ', 'T').slice(0, 16);
  const readings = wallTimeInstants(parsed, zone).filter((instant) => instant.setZone(zone).toFormat("yyyy-MM-dd'T'HH:mm") === wall);
  if (readings.length === 0)
    return {
      reason: 'bad-date',
      message: `${wall.replace('T', ' ')} does not exist in ${zone}: the clocks skip it that night (daylight saving time begins). Write the time after the change, or give an offset`,
    };
  if (readings.length > 1) {
    const offsets = readings.map((instant) => instant.setZone(zone).toFormat('ZZ'));
    return {
      reason: 'ambiguous-time',
      message: `${wall.replace('T', ' ')} happens twice in ${zone} (daylight saving time ends that night): write it with its offset, ${offsets.map((value) => `${wall}${value}`).join(' or ')}`,
    };
  }
  return { start: readings[0]!.toUTC().toISO()! };
}

/** The instants that could be meant by a wall time: read with the zone's offsets a few hours before and after it. */
function wallTimeInstants(parsed: DateTime, zone: string): DateTime[] {
  const local = parsed.toObject();
  const candidates = new Map<number, DateTime>();
  for (const hours of [-6, 6]) {
    const near = parsed.plus({ hours });
    const offset = near.setZone(zone).offset;
    const instant = DateTime.fromObject(local, { zone: FixedOffsetZone.instance(offset) });
    candidates.set(instant.toMillis(), instant);
  }
  candidates.set(parsed.toMillis(), parsed);
  return [...candidates.values()];
}

/** The instant as UTC ISO 8601, or null (readStart says why). */
export function parseStart(input: string, zone: string): string | null {
  const reading = readStart(input, zone);
  return 'start' in reading ? reading.start : null;
}

/**
 * What inZone made of each instant, by zone: luxon takes tens of microseconds for one, and every
 * performer's Today screen asks for the same day's starts every few seconds (bench/import). A few
 * days' appointments fit; the least recently asked go first.
 */
const IN_ZONE = new LRUCache<string, string, { utc: string; zone: string }>({
  max: 20_000,
  memoMethod: (_key, _stale, { context }) => DateTime.fromISO(context.utc, { zone: 'utc' }).setZone(context.zone).toISO()!,
});

/** The instant as local time with its offset in the zone, e.g. 2026-07-01T18:30:00.000+02:00. */
export function inZone(utc: string, zone: string): string {
  return IN_ZONE.memo(`${zone} ${utc}`, { context: { utc, zone } });
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
