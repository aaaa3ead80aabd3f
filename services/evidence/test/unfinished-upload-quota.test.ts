import { describe, expect, it } from 'vitest';
import { UnfinishedUploadQuota } from '../src/domain/unfinished-upload-quota.js';

// The quota's own bookkeeping, over a map standing in for the upload store (the stores themselves
// are tested with real files and S3: tests/integration/upload-limits.test.ts and
// tests/infra/s3-upload-storage.test.ts).

function quotaOver(stored: Map<string, number>, quota: number) {
  let now = 1_000_000;
  // Upload ids start with their owner's id, as in the stores.
  const reservations = async (owner: string) => new Map([...stored].filter(([id]) => id.startsWith(`${owner}.`)));
  const quotaCheck = new UnfinishedUploadQuota({ reservations }, quota, 500, undefined, () => now);
  return { quota: quotaCheck, later: (ms: number) => (now += ms) };
}

describe('UnfinishedUploadQuota', () => {
  it('counts an admitted upload before it is stored, and once only after', async () => {
    const stored = new Map<string, number>();
    const { quota } = quotaOver(stored, 1000);
    expect(await quota.admit('u', 'u.a', 600)).toEqual({ admitted: true });
    // Not stored yet: still counted.
    expect(await quota.admit('u', 'u.b', 600)).toEqual({ admitted: false, reserved: 600 });
    stored.set('u.a', 600);
    expect(await quota.admit('u', 'u.c', 400)).toEqual({ admitted: true });
    expect(await quota.admit('u', 'u.d', 1)).toEqual({ admitted: false, reserved: 1000 });
    // An unknown length counts as the largest upload (500 here); another participant has their own share.
    expect(await quota.admit('v', 'v.a', undefined)).toEqual({ admitted: true });
    expect(await quota.admit('v', 'v.b', 600)).toEqual({ admitted: false, reserved: 500 });
  });

  it('admits one creation at a time per participant', async () => {
    const { quota } = quotaOver(new Map(), 1000);
    const answers = await Promise.all(Array.from({ length: 10 }, (_, i) => quota.admit('u', `u.${i}`, 300)));
    expect(answers.filter((answer) => answer.admitted)).toHaveLength(3);
  });

  it('stops counting an upload cancelled before the next check, once asked about after its creation', async () => {
    const stored = new Map<string, number>();
    const { quota } = quotaOver(stored, 1000);
    expect(await quota.admit('u', 'u.a', 300)).toEqual({ admitted: true });
    // Stored, then cancelled (tus DELETE) before any other creation was checked.
    await quota.created('u.a');
    expect(await quota.admit('u', 'u.b', 1000)).toEqual({ admitted: true });
  });

  it('stops counting an admitted upload that was never stored (its creation failed) after a minute', async () => {
    const { quota, later } = quotaOver(new Map(), 1000);
    expect(await quota.admit('u', 'u.a', 900)).toEqual({ admitted: true });
    expect((await quota.admit('u', 'u.b', 900)).admitted).toBe(false);
    later(61_000);
    expect(await quota.admit('u', 'u.b', 900)).toEqual({ admitted: true });
  });
});
