import { hash, verify } from '@node-rs/argon2';

// Argon2id at the OWASP Password Storage Cheat Sheet's first recommendation:
// 19 MiB of memory, 2 iterations, 1 degree of parallelism.
const ARGON2ID = 2; // Algorithm.Argon2id (a const enum in the package's types)
const OPTIONS = { algorithm: ARGON2ID, memoryCost: 19_456, timeCost: 2, parallelism: 1 } as const;

export class PasswordHasher {
  private dummyHash: Promise<string> | undefined;

  hash(password: string): Promise<string> {
    return hash(password, OPTIONS);
  }

  async verify(passwordHash: string, password: string): Promise<boolean> {
    try {
      return await verify(passwordHash, password);
    } catch {
      return false;
    }
  }

  /**
   * Spends the same time as a real check when there is no such account, so that response time
   * does not tell which usernames exist.
   */
  async verifyNothing(password: string): Promise<false> {
    this.dummyHash ??= this.hash('not-a-real-password');
    await this.verify(await this.dummyHash, password);
    return false;
  }
}
