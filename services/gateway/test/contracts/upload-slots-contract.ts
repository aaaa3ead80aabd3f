import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import type { UploadSlots } from '../../src/uploads/upload-slots.js';

/**
 * What every UploadSlots adapter must do. `make` gives a new instance over the adapter's store;
 * `shared` says whether two instances share it (gateway replicas over one Redis); `lapsing`
 * makes an instance whose slots last `ms`, when the adapter has such a limit.
 */
export function uploadSlotsContract(
  name: string,
  make: () => Promise<UploadSlots>,
  options: { shared: boolean; lapsing?: (ms: number) => Promise<UploadSlots> },
): void {
  describe(`UploadSlots contract: ${name}`, () => {
    it('gives a participant as many slots as the limit, then none, and a slot given back is free again', async () => {
      const slots = await make();
      const user = randomUUID();
      const taken = [];
      for (let i = 0; i < 3; i++) taken.push(await slots.take(user, 3));
      expect(taken.every((release) => typeof release === 'function')).toBe(true);
      expect(await slots.take(user, 3)).toBeNull();
      taken[0]!();
      const again = await slots.take(user, 3);
      expect(again).not.toBeNull();
      expect(await slots.take(user, 3)).toBeNull();
    });

    it('counts each participant apart, and a slot given back twice frees one slot only', async () => {
      const slots = await make();
      const [one, two] = [randomUUID(), randomUUID()];
      const release = (await slots.take(one, 2))!;
      await slots.take(one, 2);
      expect(await slots.take(two, 2)).not.toBeNull();
      release();
      release();
      expect(await slots.take(one, 2)).not.toBeNull();
      expect(await slots.take(one, 2)).toBeNull();
    });

    it('gives no more slots than the limit to requests that arrive together', async () => {
      const slots = await make();
      const user = randomUUID();
      const results = await Promise.all(Array.from({ length: 20 }, () => slots.take(user, 4)));
      expect(results.filter((release) => release !== null)).toHaveLength(4);
    });

    it.runIf(options.shared)('shares the count between instances (gateway replicas)', async () => {
      const [a, b] = [await make(), await make()];
      const user = randomUUID();
      await a.take(user, 2);
      const release = (await b.take(user, 2))!;
      expect(await a.take(user, 2)).toBeNull();
      expect(await b.take(user, 2)).toBeNull();
      release();
      expect(await a.take(user, 2)).not.toBeNull();
    });

    it.runIf(options.lapsing !== undefined)('lets a slot never given back lapse (a gateway that stopped mid-upload)', async () => {
      const slots = await options.lapsing!(300);
      const user = randomUUID();
      await slots.take(user, 1);
      expect(await slots.take(user, 1)).toBeNull();
      await new Promise((resolve) => setTimeout(resolve, 400));
      expect(await slots.take(user, 1)).not.toBeNull();
    });
  });
}
