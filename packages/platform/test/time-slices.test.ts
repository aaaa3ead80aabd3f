import { describe, expect, it } from 'vitest';
import { SLICE_MS, TimeSlices } from '../src/index.js';

/** Keeps the CPU busy for `ms`, as a step of long synchronous work does. */
function busy(ms: number): void {
  const until = performance.now() + ms;
  while (performance.now() < until) {
    // spin
  }
}

describe('TimeSlices', () => {
  it('lets other work in between slices of long work, and shares one budget per turn among all of it', async () => {
    let steps = 0;
    const work = async () => {
      const slices = new TimeSlices();
      for (let i = 0; i < 60; i++) {
        busy(SLICE_MS / 2);
        steps++;
        await slices.maybeYield();
      }
    };
    // Work queued before the long work starts, as a request that came meanwhile would be.
    const seen: number[] = [];
    const others = new Promise<void>((resolve) => {
      const tick = () => {
        seen.push(steps);
        if (steps < 120) setImmediate(tick);
        else resolve();
      };
      setImmediate(tick);
    });
    await Promise.all([work(), work(), others]);
    // The other work ran many times while the two long ones went on, not only at their end.
    expect(seen.filter((count) => count > 0 && count < 120).length).toBeGreaterThan(10);
    // Between two of its turns, the two together took one slice (two steps of half a slice), not one each.
    const gaps = seen.slice(1).map((count, index) => count - seen[index]!);
    expect(Math.max(...gaps)).toBeLessThan(4);
  });
});
