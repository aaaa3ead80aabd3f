import { createCipheriv, createDecipheriv, hkdfSync, randomBytes } from 'node:crypto';

/**
 * Seals short secrets (a reset code, an e-mail verification token) that must travel inside events
 * from identity to the notifier: AES-256-GCM with a key derived (HKDF-SHA256) from the services'
 * shared secret, so the event log holds nothing a reader of it could use.
 */
export class SealedBox {
  private readonly key: Buffer;

  constructor(secret: string, purpose = 'portal-event-secrets') {
    this.key = Buffer.from(hkdfSync('sha256', secret, Buffer.alloc(0), purpose, 32));
  }

  seal(plaintext: string): string {
    const iv = randomBytes(12);
    const cipher = createCipheriv('aes-256-gcm', this.key, iv);
    const body = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final()]);
    return Buffer.concat([iv, cipher.getAuthTag(), body]).toString('base64url');
  }

  /** Throws when the value was not sealed with this key or was altered. */
  open(sealed: string): string {
    const raw = Buffer.from(sealed, 'base64url');
    if (raw.length < 29) throw new Error('Not a sealed value');
    const decipher = createDecipheriv('aes-256-gcm', this.key, raw.subarray(0, 12));
    decipher.setAuthTag(raw.subarray(12, 28));
    return Buffer.concat([decipher.update(raw.subarray(28)), decipher.final()]).toString('utf8');
  }
}
