import { setImmediate as nextTurn } from 'node:timers/promises';

/** How long one slice of long work may hold the event loop before it lets other work in. */
export const SLICE_MS = 8;

/**
 * Long work on the event loop (a box office's CSV of thousands of lines) done in slices: call
 * `maybeYield()` between small steps; once the slice has run `sliceMs`, it waits for the next turn
 * of the event loop, so that requests that came meanwhile are answered before the work goes on.
 * One process serves everyone in the all-in-one mode: no request waits much more than a slice.
 */
export class TimeSlices {
  private started = performance.now();

  constructor(private readonly sliceMs = SLICE_MS) {}

  async maybeYield(): Promise<void> {
    if (performance.now() - this.started < this.sliceMs) return;
    await nextTurn();
    this.started = performance.now();
  }
}
