import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

// docker compose is not installed where the tests run, so its file is checked here: compose's
// variable interpolation (${VAR}, ${VAR:-default}, ${VAR:?message}; $$ is a literal $) applied
// to the file as `docker compose config` would, and the published ports read from it.
const COMPOSE = readFileSync(fileURLToPath(new URL('../../docker-compose.yml', import.meta.url)), 'utf8');

function interpolate(text: string, env: Record<string, string>): { errors: string[] } {
  const errors: string[] = [];
  const withoutComments = text
    .split('\n')
    .filter((line) => !line.trimStart().startsWith('#'))
    .join('\n')
    .replaceAll('$$', '');
  for (const match of withoutComments.matchAll(/\$\{([A-Z0-9_]+)(?:(:?[-?])([^}]*))?\}/g)) {
    const [, name, operator, argument] = match;
    const value = env[name!];
    const unset = value === undefined || (operator?.startsWith(':') && value === '');
    if (unset && operator?.endsWith('?')) errors.push(`${name}: ${argument}`);
  }
  return { errors: [...new Set(errors)] };
}

describe('docker-compose.yml', () => {
  it('refuses to start without INTERNAL_SECRET and the storage password, and says how to make them', () => {
    const { errors } = interpolate(COMPOSE, {});
    expect(errors.map((error) => error.split(':')[0]).sort()).toEqual(['INTERNAL_SECRET', 'MINIO_ROOT_PASSWORD']);
    for (const error of errors) expect(error).toMatch(/README/);
    expect(interpolate(COMPOSE, { INTERNAL_SECRET: '', MINIO_ROOT_PASSWORD: 'x' }).errors).toHaveLength(1);
    expect(interpolate(COMPOSE, { INTERNAL_SECRET: 'a'.repeat(64), MINIO_ROOT_PASSWORD: 'b'.repeat(48) }).errors).toEqual([]);
  });

  it('has no default for a secret or a password', () => {
    expect(COMPOSE).not.toMatch(/\$\{(INTERNAL_SECRET|MINIO_ROOT_PASSWORD|S3_SECRET_ACCESS_KEY)(:?-)/);
    expect(COMPOSE).not.toMatch(/change-me|portal-minio-secret/);
  });

  it("publishes the mail catcher's web UI on 127.0.0.1 only, and says it is for trying the portal", () => {
    const mailpit = COMPOSE.slice(COMPOSE.indexOf('\n  mailpit:'), COMPOSE.indexOf('\n  identity:'));
    const ports = /ports: \[([^\]]*)\]/.exec(mailpit)?.[1]?.split(',').map((port) => port.trim().replaceAll('"', '')) ?? [];
    expect(ports.length).toBeGreaterThan(0);
    for (const port of ports) expect(port).toMatch(/^127\.0\.0\.1:/);
    const comment = COMPOSE.slice(COMPOSE.lastIndexOf('\n\n', COMPOSE.indexOf('\n  mailpit:')), COMPOSE.indexOf('\n  mailpit:'));
    expect(comment).toMatch(/trying the portal/);
    expect(comment).toMatch(/festival/);
  });
});
