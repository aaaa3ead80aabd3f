import { randomBytes } from 'node:crypto';
import { z } from 'zod';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

/**
 * The services' shared secret: INTERNAL_SECRET when set (required in the distributed mode, where
 * every service must have the same one), otherwise a random one kept in DATA_DIR/internal-secret
 * (readable by this user only), so that links in e-mails and sealed events outlive a restart.
 */
export function loadOrCreateInternalSecret(dataDir: string, env: NodeJS.ProcessEnv = process.env): string {
  if (env.INTERNAL_SECRET) return env.INTERNAL_SECRET;
  const file = join(dataDir, 'internal-secret');
  try {
    const existing = readFileSync(file, 'utf8').trim();
    if (existing.length >= 32) return existing;
  } catch {
    // not there yet
  }
  mkdirSync(dataDir, { recursive: true });
  const secret = randomBytes(32).toString('base64url');
  writeFileSync(file, `${secret}\n`, { mode: 0o600 });
  return secret;
}

/**
 * The services' shared secret during its life: `current` signs and seals everything new;
 * `previous` (INTERNAL_SECRET_PREVIOUS, set only during a rotation) is accepted when checking
 * (caller and service tokens, e-mail links, sealed event secrets, reset-code hashes), never used
 * to sign. docs/OPERATIONS.md, "Rotating the shared secret", gives the order of the rollouts.
 */
export interface SharedSecret {
  current: string;
  previous: string | null;
}

const secretText = z.string().min(32, 'must be at least 32 characters');

/** The two variables, for a service's environment schema. */
export const sharedSecretEnv = {
  INTERNAL_SECRET: z.string({ error: 'is required (at least 32 characters)' }).min(32, 'must be at least 32 characters'),
  INTERNAL_SECRET_PREVIOUS: secretText.optional(),
};

export function sharedSecretOf(parsed: { INTERNAL_SECRET: string; INTERNAL_SECRET_PREVIOUS?: string | undefined }): SharedSecret {
  const previous = parsed.INTERNAL_SECRET_PREVIOUS;
  return { current: parsed.INTERNAL_SECRET, previous: previous && previous !== parsed.INTERNAL_SECRET ? previous : null };
}

/** The secret that signs and seals. */
export function signingSecret(secret: string | SharedSecret): string {
  return typeof secret === 'string' ? secret : secret.current;
}

/** The secrets a signature or a seal is checked with: the current one first, then the previous one. */
export function checkingSecrets(secret: string | SharedSecret): string[] {
  if (typeof secret === 'string') return [secret];
  return secret.previous ? [secret.current, secret.previous] : [secret.current];
}
