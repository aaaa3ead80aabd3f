import { describe, expect, it } from 'vitest';
import { SealedBox } from '../src/index.js';

describe('SealedBox', () => {
  const secret = 'a-shared-secret-that-is-long-enough-0123';

  it('opens what it sealed, and each seal looks different', () => {
    const box = new SealedBox(secret);
    const one = box.seal('123456');
    const two = box.seal('123456');
    expect(one).not.toBe(two);
    expect(one).not.toContain('123456');
    expect(box.open(one)).toBe('123456');
  });

  it('refuses a value sealed with another secret, or altered', () => {
    const sealed = new SealedBox(secret).seal('123456');
    expect(() => new SealedBox(`${secret}x`).open(sealed)).toThrow();
    const altered = Buffer.from(sealed, 'base64url');
    altered[altered.length - 1]! ^= 1;
    expect(() => new SealedBox(secret).open(altered.toString('base64url'))).toThrow();
    expect(() => new SealedBox(secret).open('short')).toThrow();
  });
});
