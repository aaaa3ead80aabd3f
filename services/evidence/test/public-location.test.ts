import { describe, expect, it } from 'vitest';
import { coarsenLocation } from '../src/domain/public-location.js';

describe('coarsenLocation: a device position as the public sees it', () => {
  it('rounds "Add my location" positions to the given decimals, with an accuracy no better than the rounding', () => {
    expect(coarsenLocation('40.71283, -74.00609 (±15 m)', 3)).toBe('40.713, -74.006 (±111 m)');
    expect(coarsenLocation('40.71283, -74.00609', 3)).toBe('40.713, -74.006 (±111 m)');
    expect(coarsenLocation('51.50012, -0.12001 (±2500 m)', 3)).toBe('51.500, -0.120 (±2500 m)');
    expect(coarsenLocation('-33.86785, 151.20732 (±8 m)', 2)).toBe('-33.87, 151.21 (±1113 m)');
    expect(coarsenLocation('0.00012, -0.00049 (±5 m)', 3)).toBe('0.000, 0.000 (±111 m)');
    expect(coarsenLocation('12.34567, 89.99999 (±3 m)', 0)).toBe('12, 90 (±111320 m)');
  });

  it('leaves free text, positions already as coarse, and impossible coordinates as written', () => {
    expect(coarsenLocation('By the north gate', 3)).toBe('By the north gate');
    expect(coarsenLocation('Gate 4, 12.34567', 3)).toBe('Gate 4, 12.34567');
    expect(coarsenLocation('40.713, -74.006 (±111 m)', 3)).toBe('40.713, -74.006 (±111 m)');
    expect(coarsenLocation('40.71, -74.01', 3)).toBe('40.71, -74.01');
    expect(coarsenLocation('140.71283, -74.00609', 3)).toBe('140.71283, -74.00609');
    expect(coarsenLocation(null, 3)).toBeNull();
  });
});
