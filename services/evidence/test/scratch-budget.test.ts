import { describe, expect, it } from 'vitest';
import { ConfigError } from '@portal/platform';
import { evidenceSettingsFromEnv } from '../src/config.js';
import { ScratchBudget } from '../src/repositories/scratch-budget.js';

const SECRET = { INTERNAL_SECRET: 'scratch-budget-test-secret-long-enough-12345' };

describe('the scratch budget of finished uploads', () => {
  it('reserves what fits, refuses what does not until space is released, and releases once', () => {
    const budget = new ScratchBudget(5);
    const first = budget.tryReserve(2)!;
    const second = budget.tryReserve(2)!;
    expect(budget.tryReserve(2)).toBeNull();
    expect(budget.usedBytes).toBe(4);
    first();
    first();
    expect(budget.usedBytes).toBe(2);
    expect(budget.tryReserve(3)).not.toBeNull();
    second();
    expect(budget.tryReserve(0)).not.toBeNull();
  });

  it('reads UPLOAD_SCRATCH_BYTES, 4 GiB by default, and refuses a budget smaller than the largest file', () => {
    expect(evidenceSettingsFromEnv(SECRET).uploadScratchBytes).toBe(4 * 1024 ** 3);
    expect(evidenceSettingsFromEnv({ ...SECRET, UPLOAD_SCRATCH_BYTES: '2gb' }).uploadScratchBytes).toBe(2 * 1024 ** 3);
    expect(evidenceSettingsFromEnv({ ...SECRET, EVIDENCE_VIDEO_MAX_BYTES: '5gb' }).uploadScratchBytes).toBe(5 * 1024 ** 3);
    expect(() => evidenceSettingsFromEnv({ ...SECRET, UPLOAD_SCRATCH_BYTES: '100mb' })).toThrow(ConfigError);
    expect(() => evidenceSettingsFromEnv({ ...SECRET, UPLOAD_SCRATCH_BYTES: '100mb' })).toThrow(
      /UPLOAD_SCRATCH_BYTES: must be at least the largest file/,
    );
  });
});
