/**
 * How long long work may hold the event loop, in all, in one turn of it, before other work comes in
 * (bench/import: 2 ms kept a request's worst wait during an import lower than 5 ms did).
 */
export const SLICE_MS = 2;

/**
 * The turn budget is the process's, shared by every TimeSlices: an import, the outbox relay and
 * the bus consumers working at once take SLICE_MS of a turn together, not each, so a request
 * that needs several turns (the gateway, then a service, then the answer) waits a few slices in
 * all. A turn begins when the shared setImmediate fires.
 */
let turnStarted = performance.now();
let nextTurnPromise: Promise<void> | null = null;
function nextTurn(): Promise<void> {
  nextTurnPromise ??= new Promise((resolve) =>
    setImmediate(() => {
      nextTurnPromise = null;
      turnStarted = performance.now();
      resolve();
    }),
  );
  return nextTurnPromise;
}

/**
 * Long work on the event loop (a box office's CSV of thousands of lines, the events it writes)
 * done in slices: call `maybeYield()` between small steps; once this turn's slice is spent, it
 * waits for a later turn of the event loop, so that requests that came meanwhile are answered
 * before the work goes on. One process serves everyone in the all-in-one mode: no request waits
 * much more than a slice per turn it needs (bench/import).
 */
export class TimeSlices {
  constructor(private readonly sliceMs = SLICE_MS) {}

  async maybeYield(): Promise<void> {
    while (performance.now() - turnStarted >= this.sliceMs) await nextTurn();
  }
}
