import { publicLocationMetres } from '@portal/contracts';

/** A position as "Add my location" writes it: "40.71280, -74.00600 (±15 m)" (accuracy optional). */
const DEVICE_POSITION = /^\s*(-?\d{1,3}\.\d+)\s*,\s*(-?\d{1,3}\.\d+)\s*(?:\(\s*±\s*(\d+(?:\.\d+)?)\s*m\s*\))?\s*$/;

/**
 * A participant's device position as the public may see it: rounded to `decimals` places (3 is
 * about 100 m), with an accuracy no better than that rounding. Free text ("the north gate") is
 * someone's own words, not a measurement, and is left as written.
 */
export function coarsenLocation(location: string | null, decimals: number): string | null {
  if (location === null) return null;
  const match = DEVICE_POSITION.exec(location);
  if (!match) return location;
  const latitude = Number(match[1]);
  const longitude = Number(match[2]);
  if (Math.abs(latitude) > 90 || Math.abs(longitude) > 180) return location;
  const decimalsOf = (value: string) => value.split('.')[1]!.length;
  if (decimalsOf(match[1]!) <= decimals && decimalsOf(match[2]!) <= decimals) return location;
  const rounding = publicLocationMetres(decimals);
  const accuracy = Math.max(rounding, Math.round(Number(match[3] ?? 0)));
  const fixed = (value: number) => {
    const rounded = Number(value.toFixed(decimals));
    return (rounded === 0 ? 0 : rounded).toFixed(decimals);
  };
  return `${fixed(latitude)}, ${fixed(longitude)} (±${accuracy} m)`;
}
