// kafkajs's idle timer loop (packages/platform/src/events/kafkajs-idle-loop-fix.ts), on kafkajs's
// own RequestQueue class: no broker is needed to see which timers a queue sets.
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { afterEach, describe, expect, it } from 'vitest';
import { KafkajsRequestQueue } from '../src/events/kafkajs-idle-loop-fix.js';

type Queue = {
  pending: unknown[];
  throttledUntil: number;
  throttleCheckTimeoutId: NodeJS.Timeout | null;
  scheduleCheckPendingRequests(): void;
};
const silent = { debug() {}, info() {}, warn() {}, error() {} };
const queues: Queue[] = [];
function queue(): Queue {
  const Constructor = KafkajsRequestQueue as unknown as new (options: object) => Queue;
  const made = new Constructor({
    maxInFlightRequests: null,
    requestTimeout: 30_000,
    clientId: 'test',
    broker: 'localhost:9092',
    logger: silent,
  });
  queues.push(made);
  return made;
}
afterEach(() => {
  for (const made of queues.splice(0)) if (made.throttleCheckTimeoutId) clearTimeout(made.throttleCheckTimeoutId);
});

describe('kafkajs idle loop fix', () => {
  it('applies to the kafkajs version it was written for, pinned exactly', () => {
    const require = createRequire(import.meta.url);
    const installed = (require('kafkajs/package.json') as { version: string }).version;
    const declared = (
      JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as { dependencies: Record<string, string> }
    ).dependencies.kafkajs;
    expect(installed).toBe('2.2.4');
    expect(declared).toBe('2.2.4');
  });

  it('sets no timer when no request waits and no throttle is in force', () => {
    const idle = queue();
    expect(idle.pending).toEqual([]);
    expect(idle.throttledUntil).toBeLessThanOrEqual(Date.now());
    idle.scheduleCheckPendingRequests();
    expect(idle.throttleCheckTimeoutId).toBeNull();
  });

  it('still checks a waiting request, and waits out a throttle, as kafkajs does', () => {
    const waiting = queue();
    waiting.pending.push({});
    waiting.scheduleCheckPendingRequests();
    expect(waiting.throttleCheckTimeoutId).not.toBeNull();

    const throttled = queue();
    throttled.throttledUntil = Date.now() + 5_000;
    throttled.scheduleCheckPendingRequests();
    expect(throttled.throttleCheckTimeoutId).not.toBeNull();
  });
});
