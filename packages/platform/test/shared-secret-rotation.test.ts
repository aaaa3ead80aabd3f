import { describe, expect, it } from 'vitest';
import { ConfigError, IdentityTokens, SealedBox, parseEnv, sharedSecretEnv, sharedSecretOf } from '../src/index.js';
import { z } from 'zod';

// Every check of the shared secret accepts INTERNAL_SECRET_PREVIOUS during a rotation; nothing is
// ever signed or sealed with it. (tests/integration/secret-rotation.test.ts runs the rotation
// across running services.)
const OLD = 'the-old-shared-secret-long-enough-0123456';
const NEW = 'the-new-shared-secret-long-enough-6543210';
const caller = { userId: 'u1', role: 1, username: 'someone', sessionId: 's1', videoWatched: true };

describe('rotating the shared secret', () => {
  it('opens events sealed with the previous secret, seals with the current one, and refuses the old once the previous is gone', () => {
    const oldSealed = new SealedBox(OLD).seal('123456');
    const rotating = new SealedBox({ current: NEW, previous: OLD });
    expect(rotating.open(oldSealed)).toBe('123456');
    const newSealed = rotating.seal('654321');
    expect(new SealedBox(NEW).open(newSealed)).toBe('654321');
    expect(() => new SealedBox(OLD).open(newSealed)).toThrow();
    expect(() => new SealedBox({ current: NEW, previous: null }).open(oldSealed)).toThrow();
  });

  it('verifies caller and service tokens signed with either, signs with the current one only', async () => {
    const old = new IdentityTokens(OLD);
    const rotating = new IdentityTokens({ current: NEW, previous: OLD });
    expect(await rotating.verifyCaller(await old.signCaller(caller))).toMatchObject({ userId: 'u1' });
    expect(await rotating.verifyService(await old.signService('identity'))).toBe('identity');
    const signed = await rotating.signCaller(caller);
    expect(await new IdentityTokens(NEW).verifyCaller(signed)).toMatchObject({ userId: 'u1' });
    await expect(old.verifyCaller(signed)).rejects.toThrow(/signature/);
    await expect(new IdentityTokens(NEW).verifyCaller(await old.signCaller(caller))).rejects.toThrow(/signature/);
  });

  it('reads INTERNAL_SECRET_PREVIOUS: optional, at least 32 characters, ignored when it is the current one', () => {
    const schema = z.object(sharedSecretEnv);
    expect(sharedSecretOf(parseEnv(schema, { INTERNAL_SECRET: NEW }))).toEqual({ current: NEW, previous: null });
    expect(sharedSecretOf(parseEnv(schema, { INTERNAL_SECRET: NEW, INTERNAL_SECRET_PREVIOUS: '' }))).toEqual({
      current: NEW,
      previous: null,
    });
    expect(sharedSecretOf(parseEnv(schema, { INTERNAL_SECRET: NEW, INTERNAL_SECRET_PREVIOUS: OLD }))).toEqual({
      current: NEW,
      previous: OLD,
    });
    expect(sharedSecretOf(parseEnv(schema, { INTERNAL_SECRET: NEW, INTERNAL_SECRET_PREVIOUS: NEW }))).toEqual({
      current: NEW,
      previous: null,
    });
    expect(() => parseEnv(schema, { INTERNAL_SECRET: NEW, INTERNAL_SECRET_PREVIOUS: 'short' })).toThrow(ConfigError);
    expect(() => parseEnv(schema, { INTERNAL_SECRET: NEW, INTERNAL_SECRET_PREVIOUS: 'short' })).toThrow(
      /INTERNAL_SECRET_PREVIOUS: must be at least 32 characters/,
    );
  });
});
