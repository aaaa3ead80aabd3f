import { randomBytes } from 'node:crypto';
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
