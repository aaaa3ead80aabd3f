import { randomUUID } from 'node:crypto';
import { setTimeout as delay } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
import type { AdmissionLedger } from '../../src/repositories/upload-admissions.js';

/**
 * What every AdmissionLedger adapter must do. `make` gives a new instance over the adapter's
 * store; `shared` says whether two instances share it (evidence replicas over one Redis).
 */
export function admissionLedgerContract(name: string, make: () => Promise<AdmissionLedger>, options: { shared: boolean }): void {
  describe(`AdmissionLedger contract: ${name}`, () => {
    /** Runs steps at once and answers the most that ran together. */
    async function mostAtOnce(runs: ((step: () => Promise<void>) => Promise<void>)[]): Promise<number> {
      let running = 0;
      let most = 0;
      const step = async () => {
        running++;
        most = Math.max(most, running);
        await delay(15);
        running--;
      };
      await Promise.all(runs.map((run) => run(step)));
      return most;
    }

    it("runs one step of a participant at a time, and different participants' steps together", async () => {
      const ledger = await make();
      const [alice, bob] = [randomUUID(), randomUUID()];
      expect(await mostAtOnce(Array.from({ length: 6 }, () => (step) => ledger.exclusive(alice, step)))).toBe(1);
      expect(await mostAtOnce([alice, bob].map((owner) => (step) => ledger.exclusive(owner, step)))).toBe(2);
    });

    it.runIf(options.shared)('runs one step of a participant at a time across instances (replicas)', async () => {
      const [one, two] = [await make(), await make()];
      const owner = randomUUID();
      expect(await mostAtOnce(Array.from({ length: 8 }, (_, i) => (step) => (i % 2 ? one : two).exclusive(owner, step)))).toBe(1);
    });

    it("answers the step's result, and a step that fails ends its turn", async () => {
      const ledger = await make();
      const owner = randomUUID();
      await expect(ledger.exclusive(owner, async () => Promise.reject(new Error('the step failed')))).rejects.toThrow('the step failed');
      expect(await ledger.exclusive(owner, async () => 42)).toBe(42);
    });

    it('keeps, lists and forgets pending admissions per participant', async () => {
      const ledger = await make();
      const [alice, bob] = [randomUUID(), randomUUID()];
      expect(await ledger.pending(alice)).toEqual(new Map());
      await ledger.add(alice, `${alice}.a`, { size: 300, at: 1_000 });
      await ledger.add(alice, `${alice}.b`, { size: 5, at: 2_000 });
      await ledger.add(bob, `${bob}.a`, { size: 7, at: 3_000 });
      expect(await ledger.pending(alice)).toEqual(
        new Map([
          [`${alice}.a`, { size: 300, at: 1_000 }],
          [`${alice}.b`, { size: 5, at: 2_000 }],
        ]),
      );
      await ledger.remove(alice, [`${alice}.a`, `${alice}.unknown`]);
      await ledger.remove(alice, []);
      expect(await ledger.pending(alice)).toEqual(new Map([[`${alice}.b`, { size: 5, at: 2_000 }]]));
      expect(await ledger.pending(bob)).toEqual(new Map([[`${bob}.a`, { size: 7, at: 3_000 }]]));
    });

    it.runIf(options.shared)('shows what one instance added to another (replicas)', async () => {
      const [one, two] = [await make(), await make()];
      const owner = randomUUID();
      await one.add(owner, `${owner}.a`, { size: 10, at: 1 });
      expect(await two.pending(owner)).toEqual(new Map([[`${owner}.a`, { size: 10, at: 1 }]]));
      await two.remove(owner, [`${owner}.a`]);
      expect(await one.pending(owner)).toEqual(new Map());
    });
  });
}
