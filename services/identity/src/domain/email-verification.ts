import { jwtVerify, SignJWT } from 'jose';
import { hkdfSync } from 'node:crypto';

/**
 * Tokens for the e-mail verification link: signed (HS256 under a key derived from the services'
 * secret), naming the user and the address, valid for a week. A token for an address the account
 * no longer has verifies nothing.
 */
export class EmailVerificationTokens {
  private readonly key: Uint8Array;

  constructor(secret: string, private readonly validDays = 7) {
    this.key = new Uint8Array(hkdfSync('sha256', secret, Buffer.alloc(0), 'portal-email-verification', 32));
  }

  mint(userId: string, email: string): Promise<string> {
    return new SignJWT({ email })
      .setProtectedHeader({ alg: 'HS256' })
      .setSubject(userId)
      .setAudience('verify-email')
      .setIssuedAt()
      .setExpirationTime(`${this.validDays}d`)
      .sign(this.key);
  }

  async verify(token: string): Promise<{ userId: string; email: string } | null> {
    try {
      const { payload } = await jwtVerify(token, this.key, { audience: 'verify-email', algorithms: ['HS256'] });
      if (typeof payload.sub !== 'string' || typeof payload.email !== 'string') return null;
      return { userId: payload.sub, email: payload.email };
    } catch {
      return null;
    }
  }
}
