import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { BLOB_INTENTS_TABLE_SQL, SqliteBlobIntents, openDatabase, sweepBlobIntents } from '../src/index.js';

const root = mkdtempSync(join(tmpdir(), 'portal-intents-'));
const db = openDatabase(join(root, 'intents.sqlite'), [BLOB_INTENTS_TABLE_SQL]);
afterAll(() => {
  db.close();
  rmSync(root, { recursive: true, force: true });
});
const intents = new SqliteBlobIntents(db);
const noted = async () =>
  (await intents.olderThan(new Date(Date.now() + 60_000).toISOString(), 10_000)).map((intent) => intent.prefix).sort();

describe('sweeping blob intents', () => {
  it('settles every note made before the time given, in batches, and removes each note after settling it', async () => {
    const prefixes = Array.from({ length: 250 }, (_, n) => `things/${String(n).padStart(3, '0')}/`);
    for (const prefix of prefixes) await intents.add(prefix);
    const settled: string[] = [];
    // Notes made from now on are of work that may still be going on: not this sweep's.
    const before = new Date(Date.now() + 5);
    await new Promise((resolve) => setTimeout(resolve, 10));
    await intents.add('things/fresh/');

    const swept = await sweepBlobIntents(intents, before, async (prefix) => {
      expect(await noted()).toContain(prefix);
      settled.push(prefix);
      return prefix.endsWith('0/') ? 2 : 0;
    });
    expect(settled.sort()).toEqual(prefixes);
    expect(swept).toEqual({ notes: 250, blobs: 2 * 25 });
    expect(await noted()).toEqual(['things/fresh/']);
    await intents.remove('things/fresh/');
  });

  it('keeps a note whose settling failed, for the next sweep', async () => {
    await intents.add('broken/1/');
    await expect(
      sweepBlobIntents(intents, new Date(Date.now() + 1000), async () => {
        throw new Error('the blob store is away');
      }),
    ).rejects.toThrow('the blob store is away');
    expect(await noted()).toEqual(['broken/1/']);
    expect(await sweepBlobIntents(intents, new Date(Date.now() + 1000), async () => 1)).toEqual({ notes: 1, blobs: 1 });
    expect(await noted()).toEqual([]);
  });
});
