import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';

// docker compose is not installed where the tests run, so its file is checked here: compose's
// variable interpolation (${VAR}, ${VAR:-default}, ${VAR:?message}; $$ is a literal $) applied
// to the file as `docker compose config` would, and the published ports read from it.
const COMPOSE = readFileSync(fileURLToPath(new URL('../../docker-compose.yml', import.meta.url)), 'utf8');
const README = readFileSync(fileURLToPath(new URL('../../README.md', import.meta.url)), 'utf8');
const TESTCONTAINERS = readFileSync(fileURLToPath(new URL('../support/infra-servers.ts', import.meta.url)), 'utf8');

interface ComposeService {
  image?: string;
  build?: unknown;
  restart?: string;
  stop_grace_period?: string;
  command?: string[] | string;
  environment?: Record<string, string | number>;
}
/** The file as compose reads it (YAML merge keys `<<:` included), before interpolation. */
const SERVICES = (parse(COMPOSE, { merge: true }) as { services: Record<string, ComposeService> }).services;

/** Repositories their publishers removed from Docker Hub: a pull fails ("pull access denied"). */
const REMOVED_REPOSITORIES = ['minio/minio', 'minio/mc'];

/** Compose's duration ("1m30s", "30s", "2m") in seconds. */
function seconds(duration: string | undefined): number {
  if (!duration) return 10; // compose's default stop_grace_period
  let total = 0;
  for (const [, n, unit] of duration.matchAll(/(\d+)(h|m|s)/g)) total += Number(n) * { h: 3600, m: 60, s: 1 }[unit as 'h' | 'm' | 's'];
  return total;
}

/** An image reference pinned to a version: a tag with a digit in it, never `latest`, or a digest. */
function pinned(image: string): boolean {
  if (image.includes('@sha256:')) return true;
  const tag = image.slice(image.lastIndexOf('/') + 1).split(':')[1];
  return tag !== undefined && tag !== 'latest' && /\d/.test(tag);
}

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
    expect(errors.map((error) => error.split(':')[0]).sort()).toEqual(['INTERNAL_SECRET', 'S3_SECRET_ACCESS_KEY']);
    for (const error of errors) expect(error).toMatch(/README/);
    expect(interpolate(COMPOSE, { INTERNAL_SECRET: '', S3_SECRET_ACCESS_KEY: 'x' }).errors).toHaveLength(1);
    expect(interpolate(COMPOSE, { INTERNAL_SECRET: 'a'.repeat(64), S3_SECRET_ACCESS_KEY: 'b'.repeat(48) }).errors).toEqual([]);
  });

  it("names in the README's .env line exactly the variables it refuses to start without", () => {
    const section = README.slice(README.indexOf('### docker compose'), README.indexOf('## Test it'));
    const printf = /printf '([^']*)'/.exec(section)?.[1] ?? '';
    const named = [...printf.matchAll(/([A-Z0-9_]+)=%s/g)].map((match) => match[1]).sort();
    expect(named).toEqual(
      interpolate(COMPOSE, {})
        .errors.map((error) => error.split(':')[0])
        .sort(),
    );
  });

  it('has no default for a secret or a password', () => {
    expect(COMPOSE).not.toMatch(/\$\{(INTERNAL_SECRET|S3_SECRET_ACCESS_KEY)(:?-)/);
    expect(COMPOSE).not.toMatch(/change-me|portal-minio-secret/);
  });

  it('pins every image to a version, none from a repository removed from Docker Hub (the testcontainers of the infra tests too)', () => {
    const images = Object.values(SERVICES).flatMap((service) => (service.image ? [service.image] : []));
    expect(images.length).toBeGreaterThanOrEqual(5);
    const containerImages = [...TESTCONTAINERS.matchAll(/new GenericContainer\('([^']+)'\)/g)].map((match) => match[1]!);
    expect(containerImages.length).toBeGreaterThanOrEqual(5);
    for (const image of [...images, ...containerImages]) {
      expect(pinned(image), `${image} has no version`).toBe(true);
      expect(REMOVED_REPOSITORIES, `${image} can no longer be pulled`).not.toContain(image.split(':')[0]);
    }
  });

  it('makes the bucket before the S3 server answers, so the services find it on the first start', () => {
    const s3 = SERVICES.s3!;
    const bucket = /S3_BUCKET: (\S+)/.exec(COMPOSE)?.[1];
    expect([s3.command].flat().join(' ')).toContain(`mkdir -p /data/${bucket} && exec versitygw`);
    expect([s3.command].flat().join(' ')).toMatch(/posix \/data$/);
    expect(COMPOSE).toMatch(/S3_ENDPOINT: http:\/\/s3:7070/);
  });

  it('restarts the servers unless stopped, and gives every process at least its shutdown time to stop', () => {
    for (const [name, service] of Object.entries(SERVICES)) {
      if (name === 'kafka-topics') continue; // a one-shot Job: it runs once and exits
      expect(service.restart, name).toBe('unless-stopped');
      const env = service.environment ?? {};
      // SHUTDOWN_GRACE_MS (25 s unless set) plus a margin for the process to exit.
      const graceMs = Number(env.SHUTDOWN_GRACE_MS ?? (service.build ? 25_000 : 0));
      expect(seconds(service.stop_grace_period), `${name}: stop_grace_period`).toBeGreaterThanOrEqual(graceMs / 1000 + 5);
    }
  });

  it('lets .env set TRUST_PROXY (the gateway behind a proxy) and SMTP_URL (a real mail server)', () => {
    expect(String(SERVICES.gateway!.environment!.TRUST_PROXY)).toMatch(/^\$\{TRUST_PROXY:-false\}$/);
    expect(String(SERVICES.notifier!.environment!.SMTP_URL)).toMatch(/^\$\{SMTP_URL:-smtp:\/\/mailpit:1025\}$/);
  });

  it("publishes the mail catcher's web UI on 127.0.0.1 only, and says it is for trying the portal", () => {
    const mailpit = COMPOSE.slice(COMPOSE.indexOf('\n  mailpit:'), COMPOSE.indexOf('\n  identity:'));
    const ports =
      /ports: \[([^\]]*)\]/
        .exec(mailpit)?.[1]
        ?.split(',')
        .map((port) => port.trim().replaceAll('"', '')) ?? [];
    expect(ports.length).toBeGreaterThan(0);
    for (const port of ports) expect(port).toMatch(/^127\.0\.0\.1:/);
    const comment = COMPOSE.slice(COMPOSE.lastIndexOf('\n\n', COMPOSE.indexOf('\n  mailpit:')), COMPOSE.indexOf('\n  mailpit:'));
    expect(comment).toMatch(/trying the portal/);
    expect(comment).toMatch(/festival/);
  });
});
