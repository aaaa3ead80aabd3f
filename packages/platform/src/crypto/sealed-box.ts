import { createCipheriv, createDecipheriv, hkdfSync, randomBytes } from 'node:crypto';
import { checkingSecrets, signingSecret, type SharedSecret } from '../config/internal-secret.js';

/**
 * Seals short secrets (a reset code, an e-mail verification token) that must travel inside events
 * from identity to the notifier: AES-256-GCM with a key derived (HKDF-SHA256) from the services'
 * shared secret, so the event log holds nothing a reader of it could use. Seals with the current
 * secret; opens with it and, during a rotation, with the previous one (an event sealed by a pod
 * that has not restarted yet, or waiting in the log from before).
 */
export class SealedBox {
  private readonly key: Buffer;
  private readonly keys: Buffer[];

  constructor(secret: string | SharedSecret, purpose = 'portal-event-secrets') {
    const derive = (text: string) => Buffer.from(hkdfSync('sha256', text, Buffer.alloc(0), purpose, 32));
    this.key = derive(signingSecret(secret));
    this.keys = checkingSecrets(secret).map(derive);
  }

  seal(plaintext: string): string {
    const iv = randomBytes(12);
    const cipher = createCipheriv('aes-256-gcm', this.key, iv);
    const body = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final()]);
    return Buffer.concat([iv, cipher.getAuthTag(), body]).toString('base64url');
  }

  /** Throws when the value was not sealed with one of the keys or was altered. */
  open(sealed: string): string {
    const raw = Buffer.from(sealed, 'base64url');
    if (raw.length < 29) throw new Error('Not a sealed value');
    let failure: unknown;
    for (const key of this.keys) {
      try {
        const decipher = createDecipheriv('aes-256-gcm', key, raw.subarray(0, 12));
        decipher.setAuthTag(raw.subarray(12, 28));
        return Buffer.concat([decipher.update(raw.subarray(28)), decipher.final()]).toString('utf8');
      } catch (error) {
        failure ??= error;
      }
    }
    throw failure;
  }
}
