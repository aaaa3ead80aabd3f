import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import type { ScheduleStore } from '../../src/repositories/schedule-store.js';

/** The contract of the schedule store, for every adapter (SQLite, MongoDB). */
export function scheduleStoreContract(name: string, create: () => Promise<ScheduleStore>): void {
  describe(`ScheduleStore contract: ${name}`, () => {
    it('claims a run at most once per period, and answers when the previous one was', async () => {
      const store = await create();
      const run = `digest-${randomUUID()}`;
      const t0 = Date.parse('2026-07-01T10:00:00.000Z');
      const hour = 3600_000;
      expect(await store.claim(run, new Date(t0), hour)).toEqual({ previous: new Date(t0 - hour).toISOString() });
      expect(await store.claim(run, new Date(t0 + 1000), hour)).toBeNull();
      expect(await store.claim(run, new Date(t0 + hour - 1), hour)).toBeNull();
      expect(await store.claim(run, new Date(t0 + hour), hour)).toEqual({ previous: new Date(t0).toISOString() });
      expect(await store.claim(`other-${run}`, new Date(t0 + 5), hour)).not.toBeNull();
    });

    it('gives a run to one of several claims made at once', async () => {
      const store = await create();
      const run = `digest-${randomUUID()}`;
      const now = new Date();
      const claims = await Promise.all(Array.from({ length: 5 }, () => store.claim(run, now, 60_000)));
      expect(claims.filter((claim) => claim !== null)).toHaveLength(1);
    });
  });
}
