import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import type { BlobIntents } from '../blobs/blob-intents.js';

export interface BlobIntentsContractOptions {
  /** The store under test; it may hold notes of other tests (each test here uses its own prefixes). */
  create: () => Promise<BlobIntents>;
}

/** The one contract every blob-intent store must pass (SQLite, MongoDB). */
export function blobIntentsContract(name: string, options: BlobIntentsContractOptions): void {
  describe(`BlobIntents contract: ${name}`, () => {
    const later = () => new Date(Date.now() + 60_000);

    it('notes a prefix once, as old as its first note, until it is removed (both idempotent)', async () => {
      const intents = await options.create();
      const id = randomUUID();
      const [revision, whole] = [`contract/${id}/r1/`, `contract/${id}/`];
      const mine = async (before: Date) =>
        (await intents.olderThan(before.toISOString(), 10_000)).filter((intent) => intent.prefix.includes(id));
      await intents.add(revision);
      const [first] = await mine(later());
      expect(first).toEqual({ prefix: revision, created_at: expect.any(String) });
      expect(Number.isNaN(Date.parse(first!.created_at))).toBe(false);
      await intents.add(whole);
      await intents.add(revision);
      const both = await mine(later());
      expect(both.map((intent) => intent.prefix).sort()).toEqual([whole, revision].sort());
      expect(both.find((intent) => intent.prefix === revision)!.created_at).toBe(first!.created_at);
      // Only notes made strictly before the time given.
      expect(await mine(new Date(Date.parse(first!.created_at)))).toEqual([]);
      await intents.remove(revision);
      await intents.remove(revision);
      expect((await mine(later())).map((intent) => intent.prefix)).toEqual([whole]);
      await intents.remove(whole);
      await intents.remove(`contract/${id}/never-noted`);
      expect(await mine(later())).toEqual([]);
    });

    it('answers the oldest notes first, at most as many as asked', async () => {
      const intents = await options.create();
      const id = randomUUID();
      const prefixes = Array.from({ length: 5 }, (_, n) => `contract/${id}/k${n}`);
      for (const prefix of prefixes) {
        await intents.add(prefix);
        // Distinct times (ISO strings have millisecond resolution).
        await new Promise((resolve) => setTimeout(resolve, 3));
      }
      const all = (await intents.olderThan(later().toISOString(), 10_000)).filter((intent) => intent.prefix.includes(id));
      expect(all.map((intent) => intent.prefix)).toEqual(prefixes);
      const times = all.map((intent) => intent.created_at);
      expect([...times].sort()).toEqual(times);
      // A limit cuts the answer: the store may hold older notes of other tests, never more than asked.
      expect((await intents.olderThan(later().toISOString(), 2)).length).toBe(2);
      const upToThird = (await intents.olderThan(all[3]!.created_at, 10_000)).filter((intent) => intent.prefix.includes(id));
      expect(upToThird.map((intent) => intent.prefix)).toEqual(prefixes.slice(0, 3));
      for (const prefix of prefixes) await intents.remove(prefix);
    });

    it('takes many notes of one prefix at once as one, without an error', async () => {
      const intents = await options.create();
      const prefix = `contract/${randomUUID()}/`;
      await Promise.all(Array.from({ length: 20 }, () => intents.add(prefix)));
      const noted = (await intents.olderThan(later().toISOString(), 10_000)).filter((intent) => intent.prefix === prefix);
      expect(noted).toHaveLength(1);
      await Promise.all([intents.remove(prefix), intents.remove(prefix), intents.add(`${prefix}other`)]);
      const left = (await intents.olderThan(later().toISOString(), 10_000)).filter((intent) => intent.prefix.startsWith(prefix));
      expect(left.map((intent) => intent.prefix)).toEqual([`${prefix}other`]);
      await intents.remove(`${prefix}other`);
    });
  });
}
