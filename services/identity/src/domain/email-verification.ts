import { jwtVerify, SignJWT } from 'jose';
import { hkdfSync } from 'node:crypto';
import { checkingSecrets, signingSecret, type SharedSecret } from '@portal/platform';

/**
 * Tokens for the e-mail verification link: signed (HS256 under a key derived from the services'
 * secret), naming the user and the address, valid for a week. A token for an address the account
 * no longer has verifies nothing. Minted under the current secret; a link minted under the previous
 * one (INTERNAL_SECRET_PREVIOUS, during a rotation) still verifies.
 */
export class EmailVerificationTokens {
  private readonly key: Uint8Array;
  private readonly keys: Uint8Array[];

  constructor(
    secret: string | SharedSecret,
    private readonly validDays = 7,
  ) {
    const derive = (text: string) => new Uint8Array(hkdfSync('sha256', text, Buffer.alloc(0), 'portal-email-verification', 32));
    this.key = derive(signingSecret(secret));
    this.keys = checkingSecrets(secret).map(derive);
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
    for (const key of this.keys) {
      try {
        const { payload } = await jwtVerify(token, key, { audience: 'verify-email', algorithms: ['HS256'] });
        if (typeof payload.sub !== 'string' || typeof payload.email !== 'string') return null;
        return { userId: payload.sub, email: payload.email };
      } catch {
        // not this key (or not valid at all): the next one, if any
      }
    }
    return null;
  }
}
