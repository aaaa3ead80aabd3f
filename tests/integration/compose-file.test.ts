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
  ports?: string[];
  healthcheck?: { test: string[] | string };
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

/** The secrets compose refuses to start without: the services' shared one and each server's password. */
const SECRETS = ['INTERNAL_SECRET', 'KAFKA_SASL_PASSWORD', 'MONGO_PASSWORD', 'REDIS_PASSWORD', 'S3_SECRET_ACCESS_KEY'];
const ALL_SET = Object.fromEntries(SECRETS.map((name) => [name, 'c0ffee'.repeat(8)]));

/** The service's environment value, with compose's interpolation applied from `env`. */
function resolved(value: string | number | undefined, env: Record<string, string>): string {
  return String(value ?? '').replace(/\$\{([A-Z0-9_]+)(?::?[-?][^}]*)?\}/g, (_, name: string) => env[name] ?? '');
}

/** An image's version as numbers: apache/kafka:4.3.1 -> [4, 3, 1]; redis:8.6.7-alpine -> [8, 6, 7]. */
function versionOf(image: string): number[] {
  return (/:(\d+(?:\.\d+)*)/.exec(image)?.[1] ?? '0').split('.').map(Number);
}
const atLeast = (version: number[], minimum: number[]) => {
  for (let i = 0; i < minimum.length; i += 1) if ((version[i] ?? 0) !== minimum[i]) return (version[i] ?? 0) > minimum[i]!;
  return true;
};

describe('docker-compose.yml', () => {
  it("refuses to start without INTERNAL_SECRET and every server's password, and says how to make them", () => {
    const { errors } = interpolate(COMPOSE, {});
    expect(errors.map((error) => error.split(':')[0]).sort()).toEqual(SECRETS);
    for (const error of errors) expect(error).toMatch(/README/);
    for (const name of SECRETS) expect(interpolate(COMPOSE, { ...ALL_SET, [name]: '' }).errors.map((e) => e.split(':')[0])).toEqual([name]);
    expect(interpolate(COMPOSE, ALL_SET).errors).toEqual([]);
  });

  it('runs no server without authentication: MongoDB with a user, Redis with a password, Kafka with SASL, each from .env', () => {
    const env = { ...ALL_SET, MONGO_PASSWORD: 'mongo-secret', REDIS_PASSWORD: 'redis-secret', KAFKA_SASL_PASSWORD: 'kafka-secret' };
    const mongo = SERVICES.mongo!;
    expect(resolved(mongo.environment!.MONGO_INITDB_ROOT_USERNAME, env)).toBe('portal');
    expect(resolved(mongo.environment!.MONGO_INITDB_ROOT_PASSWORD, env)).toBe('mongo-secret');
    const redis = SERVICES.redis!;
    const redisArgs = [redis.command].flat().map((arg) => resolved(arg, env));
    expect(redisArgs[redisArgs.indexOf('--requirepass') + 1]).toBe('redis-secret');
    expect(resolved(redis.environment!.REDISCLI_AUTH, env)).toBe('redis-secret');
    const kafka = SERVICES.kafka!.environment!;
    // Every listener another container reaches asks for SASL; the controller's answers inside the container only.
    const listeners = String(kafka.KAFKA_LISTENERS).split(',');
    const protocols = Object.fromEntries(
      String(kafka.KAFKA_LISTENER_SECURITY_PROTOCOL_MAP)
        .split(',')
        .map((pair) => pair.split(':')),
    );
    for (const listener of listeners) {
      const [name, address] = listener.split('://');
      if (protocols[name!] !== 'SASL_PLAINTEXT' && protocols[name!] !== 'SASL_SSL')
        expect(address, listener).toMatch(/^(localhost|127\.0\.0\.1):/);
    }
    expect(String(kafka.KAFKA_ADVERTISED_LISTENERS)).toMatch(/^SASL_PLAINTEXT:\/\//);
    expect(resolved(kafka.KAFKA_LISTENER_NAME_SASL__PLAINTEXT_PLAIN_SASL_JAAS_CONFIG, env)).toMatch(/user_portal="kafka-secret"/);
    // Every process that talks to them uses the same credentials.
    for (const [name, service] of Object.entries(SERVICES)) {
      const environment = service.environment ?? {};
      if (environment.MONGO_URL !== undefined)
        expect(resolved(environment.MONGO_URL, env), name).toMatch(/^mongodb:\/\/portal:mongo-secret@mongo:27017\//);
      if (environment.REDIS_URL !== undefined) expect(resolved(environment.REDIS_URL, env), name).toBe('redis://:redis-secret@redis:6379');
      if (environment.KAFKA_BROKERS !== undefined) {
        expect(environment.KAFKA_SASL_MECHANISM, name).toBe('plain');
        expect(environment.KAFKA_SASL_USERNAME, name).toBe('portal');
        expect(resolved(environment.KAFKA_SASL_PASSWORD, env), name).toBe('kafka-secret');
      }
    }
    // None of these servers is published on the host.
    for (const name of ['kafka', 'mongo', 'redis', 's3']) expect(SERVICES[name]!.ports, name).toBeUndefined();
  });

  it('runs patched releases: MongoDB 7.0.28 or later (CVE-2025-14847), Redis 8.6.3 or later (CVE-2026-23479), Kafka 4 (KRaft)', () => {
    expect(atLeast(versionOf(SERVICES.mongo!.image!), [7, 0, 28])).toBe(true);
    expect(atLeast(versionOf(SERVICES.redis!.image!), [8, 6, 3])).toBe(true);
    expect(versionOf(SERVICES.kafka!.image!)[0]).toBe(4);
    expect(SERVICES.kafka!.environment!.KAFKA_PROCESS_ROLES).toBe('broker,controller');
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
    expect(COMPOSE).not.toMatch(/\$\{(INTERNAL_SECRET|S3_SECRET_ACCESS_KEY|MONGO_PASSWORD|REDIS_PASSWORD|KAFKA_SASL_PASSWORD)(:?-)/);
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
