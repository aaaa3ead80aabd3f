import { createRequire } from 'node:module';

/**
 * A fix of kafkajs 2.2.4 (the last release; the package is pinned to it exactly): every broker
 * connection's request queue re-arms a timer about every millisecond while nothing waits
 * (`scheduleCheckPendingRequests` sets a timeout of `throttledUntil - now`, negative when not
 * throttled, even with no pending request, and each check schedules the next). An idle service
 * spent some 5 % of a core per process on it. Reported upstream (tulios/kafkajs#1556, #1704),
 * never released.
 *
 * The check only matters when a request waits: `push` schedules one itself when it queues a
 * request behind a throttle, and a fulfilled request checks the queue. So with nothing pending
 * and no throttle in force, no timer is set; otherwise kafkajs's own code runs unchanged.
 *
 * This is the only place that reaches into kafkajs's internals. Its test
 * (packages/platform/test/kafkajs-idle-loop-fix.test.ts) fails when an upgrade changes what it
 * relies on: the module path, the method and the two fields read here.
 */
interface RequestQueue {
  pending: unknown[];
  throttledUntil: number;
  scheduleCheckPendingRequests(): void;
}

const require = createRequire(import.meta.url);
/** kafkajs's RequestQueue class, the one kafkajs itself loads (same file, same module cache). */
export const KafkajsRequestQueue = require('kafkajs/src/network/requestQueue/index.js') as { prototype: RequestQueue };

const FIXED = Symbol.for('portal.kafkajs.idle-loop-fix');
const prototype = KafkajsRequestQueue.prototype as RequestQueue & { [FIXED]?: true };
if (!prototype[FIXED]) {
  const scheduleCheckPendingRequests = prototype.scheduleCheckPendingRequests;
  prototype.scheduleCheckPendingRequests = function (this: RequestQueue) {
    if (this.pending.length === 0 && this.throttledUntil <= Date.now()) return;
    scheduleCheckPendingRequests.call(this);
  };
  prototype[FIXED] = true;
}
