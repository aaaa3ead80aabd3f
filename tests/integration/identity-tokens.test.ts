import { setTimeout as sleep } from 'node:timers/promises';
import { SignJWT } from 'jose';
import { describe, expect, it } from 'vitest';
import { IdentityTokens, type CallerIdentity } from '@portal/platform';

// The tokens that carry a caller from the gateway to the services. A service remembers the tokens
// it has verified (the gateway reuses one per session for about 30 s); these checks make sure that
// remembering never lets through a token that verifying would refuse.
const SECRET = 'a-test-secret-that-is-long-enough-1234567890';
const caller: CallerIdentity = { userId: 'u-1', role: 1, username: 'ada', sessionId: 'hash-of-session', videoWatched: true };

describe('identity tokens', () => {
  it('verifies a token the gateway signed, again and again, answering a fresh copy each time', async () => {
    const tokens = new IdentityTokens(SECRET);
    const token = await tokens.signCaller(caller);
    const first = await tokens.verifyCaller(token);
    expect(first).toEqual(caller);
    first.role = 2; // a caller changing what it got must not change what the next request gets
    expect(await tokens.verifyCaller(token)).toEqual(caller);
    // Another instance with the same secret (another service) verifies it too.
    expect(await new IdentityTokens(SECRET).verifyCaller(token)).toEqual(caller);
  });

  it('refuses a token changed by one character, even after the original was verified', async () => {
    const tokens = new IdentityTokens(SECRET);
    const token = await tokens.signCaller(caller);
    await tokens.verifyCaller(token);
    const [header, payload, signature] = token.split('.');
    const flipped = `${signature!.slice(0, 10)}${signature![10] === 'A' ? 'B' : 'A'}${signature!.slice(11)}`;
    await expect(tokens.verifyCaller(`${header}.${payload}.${flipped}`)).rejects.toThrow();
    const admin = Buffer.from(JSON.stringify({ ...JSON.parse(Buffer.from(payload!, 'base64url').toString()), role: 2 })).toString('base64url');
    await expect(tokens.verifyCaller(`${header}.${admin}.${signature}`)).rejects.toThrow();
  });

  it('refuses a token signed with another secret, and a service token as a caller', async () => {
    const tokens = new IdentityTokens(SECRET);
    const forged = await new SignJWT({ role: 2, username: 'evil', sid: 'x' })
      .setProtectedHeader({ alg: 'HS256' })
      .setSubject('u-1')
      .setIssuer('portal-gateway')
      .setAudience('portal-services')
      .setExpirationTime('60s')
      .sign(new TextEncoder().encode('another-secret-that-is-long-enough-0987654321'));
    await expect(tokens.verifyCaller(forged)).rejects.toThrow();
    await expect(tokens.verifyCaller(await tokens.signService('evidence'))).rejects.toThrow();
    expect(await tokens.verifyService(await tokens.signService('evidence'))).toBe('evidence');
  });

  it('refuses a token once it has expired, although it verified before', async () => {
    const tokens = new IdentityTokens(SECRET);
    const token = await tokens.signCaller(caller, 1);
    expect(await tokens.verifyCaller(token)).toEqual(caller);
    await sleep(2100); // exp is in whole seconds: at most 2 s from now
    await expect(tokens.verifyCaller(token)).rejects.toThrow(/exp/);
  });
});
