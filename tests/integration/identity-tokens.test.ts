import { createHmac } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { SignJWT, jwtVerify } from 'jose';
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
    const admin = Buffer.from(JSON.stringify({ ...JSON.parse(Buffer.from(payload!, 'base64url').toString()), role: 2 })).toString(
      'base64url',
    );
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

// The tokens are signed and checked with node:crypto's synchronous HMAC (packages/platform
// hs256.ts) instead of jose. The same tokens either way: jose reads what the portal writes and the
// portal reads what jose writes, and every kind of token jose refused is still refused.
describe('identity tokens without jose', () => {
  const key = new TextEncoder().encode(SECRET);
  const b64 = (value: unknown) => Buffer.from(JSON.stringify(value)).toString('base64url');
  const now = () => Math.floor(Date.now() / 1000);
  /** A token signed with the right secret (by hand: jose signs no odd header), whatever its header and claims say. */
  const hmacSigned = async (header: object, claims: unknown) => {
    const input = `${b64(header)}.${b64(claims)}`;
    return `${input}.${createHmac('sha256', key).update(input).digest('base64url')}`;
  };
  const callerClaims = {
    role: 1,
    username: 'ada',
    sid: 'hash-of-session',
    vw: true,
    sub: 'u-1',
    iss: 'portal-gateway',
    aud: 'portal-services',
  };

  it('writes tokens jose verifies, with the claims jose wrote, and reads tokens jose signed', async () => {
    const tokens = new IdentityTokens(SECRET);
    const token = await tokens.signCaller(caller, 60);
    const { payload, protectedHeader } = await jwtVerify(token, key, {
      issuer: 'portal-gateway',
      audience: 'portal-services',
      algorithms: ['HS256'],
    });
    expect(protectedHeader).toEqual({ alg: 'HS256' });
    expect(payload).toMatchObject(callerClaims);
    expect(payload.exp! - payload.iat!).toBe(60);
    expect(Math.abs(payload.iat! - now())).toBeLessThanOrEqual(1);
    const byJose = await new SignJWT({ role: 1, username: 'ada', sid: 'hash-of-session', vw: true })
      .setProtectedHeader({ alg: 'HS256' })
      .setSubject('u-1')
      .setIssuer('portal-gateway')
      .setAudience('portal-services')
      .setIssuedAt()
      .setExpirationTime('60s')
      .sign(key);
    expect(await new IdentityTokens(SECRET).verifyCaller(byJose)).toEqual(caller);
    const service = await tokens.signService('evidence');
    expect((await jwtVerify(service, key, { issuer: 'portal-gateway', audience: 'portal-internal' })).payload.sub).toBe('evidence');
  });

  it('refuses other algorithms, declared extensions, odd spellings and broken shapes', async () => {
    const tokens = new IdentityTokens(SECRET);
    const good = await tokens.signCaller(caller);
    const [header, payload, signature] = good.split('.') as [string, string, string];
    const claims = { ...callerClaims, exp: now() + 60 };
    const refused: [string, string][] = [
      ['alg none', `${b64({ alg: 'none' })}.${payload}.`],
      ['alg none, signature kept', `${b64({ alg: 'none' })}.${payload}.${signature}`],
      ['HS512', await hmacSigned({ alg: 'HS512' }, claims)],
      ['a critical extension', await hmacSigned({ alg: 'HS256', crit: ['exp'] }, claims)],
      ['an unencoded payload (b64: false)', `${b64({ alg: 'HS256', b64: false, crit: ['b64'] })}.${payload}.${signature}`],
      ['a character added to the signature', `${header}.${payload}.${signature}A`],
      ['padding', `${header}.${payload}.${signature}=`],
      ['two parts', `${header}.${payload}`],
      ['four parts', `${good}.${signature}`],
      ['an empty string', ''],
      ['a payload that is no object', await hmacSigned({ alg: 'HS256' }, [1, 2])],
      ['a payload that is no JSON', `${header}.${Buffer.from('not json').toString('base64url')}.${signature}`],
      ['no expiry', await hmacSigned({ alg: 'HS256' }, { ...callerClaims })],
      ['another issuer', await hmacSigned({ alg: 'HS256' }, { ...claims, iss: 'someone-else' })],
      ['another audience', await hmacSigned({ alg: 'HS256' }, { ...claims, aud: 'portal-internal' })],
      ['not valid yet', await hmacSigned({ alg: 'HS256' }, { ...claims, nbf: now() + 120 })],
      ['expired a second ago', await hmacSigned({ alg: 'HS256' }, { ...claims, iat: now() - 61, exp: now() - 1 })],
      ['expiring this second', await hmacSigned({ alg: 'HS256' }, { ...claims, iat: now() - 60, exp: now() })],
      ['a text iat', await hmacSigned({ alg: 'HS256' }, { ...claims, iat: 'yesterday' })],
    ];
    for (const [what, token] of refused) {
      await expect(tokens.verifyCaller(token), what).rejects.toThrow();
    }
    // The same hand signing with nothing odd passes: the refusals above are for what they change.
    expect(await tokens.verifyCaller(await hmacSigned({ alg: 'HS256' }, claims))).toEqual(caller);
    // An audience list naming the services is accepted, as jose accepts it.
    expect(await tokens.verifyCaller(await hmacSigned({ alg: 'HS256' }, { ...claims, aud: ['elsewhere', 'portal-services'] }))).toEqual(
      caller,
    );
    // A service token never passes as a caller, nor a caller token as a service.
    await expect(tokens.verifyService(good)).rejects.toThrow();
  });
});
