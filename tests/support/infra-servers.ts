import { existsSync } from 'node:fs';
import { requirePrerequisite } from './required-suites.js';

/**
 * Where the infrastructure suite finds its servers: addresses in the environment (the CI script
 * starts real servers and exports them), or containers started with testcontainers where a Docker
 * engine exists. Where neither is available a suite is skipped, and says why.
 */
export interface InfraServers {
  kafkaBrokers: string[] | null;
  redisUrl: string | null;
  mongoUrl: string | null;
  s3: { endpoint: string; bucket: string; region: string; accessKeyId: string; secretAccessKey: string } | null;
  smtpUrl: string | null;
  /** The mail catcher's HTTP API, to read back what was sent over SMTP (MailDev or Mailpit). */
  mailApi: { kind: 'maildev' | 'mailpit'; url: string } | null;
  source: Record<string, 'env' | 'testcontainers' | 'none'>;
}

export function dockerAvailable(): boolean {
  return Boolean(process.env.DOCKER_HOST) || existsSync('/var/run/docker.sock');
}

const stops: (() => Promise<unknown>)[] = [];

export async function stopContainers(): Promise<void> {
  for (const stop of stops.splice(0)) await stop().catch(() => undefined);
}

/** Resolves each server once; starts containers only for what the environment does not give. */
export async function infraServers(): Promise<InfraServers> {
  const env = process.env;
  const source: InfraServers['source'] = {};
  const servers: InfraServers = {
    kafkaBrokers: env.KAFKA_BROKERS ? env.KAFKA_BROKERS.split(',') : null,
    redisUrl: env.REDIS_URL ?? null,
    mongoUrl: env.MONGO_URL ?? null,
    s3:
      env.S3_ENDPOINT && env.S3_BUCKET
        ? {
            endpoint: env.S3_ENDPOINT,
            bucket: env.S3_BUCKET,
            region: env.S3_REGION ?? 'us-east-1',
            accessKeyId: env.S3_ACCESS_KEY_ID ?? '',
            secretAccessKey: env.S3_SECRET_ACCESS_KEY ?? '',
          }
        : null,
    smtpUrl: env.SMTP_URL ?? null,
    mailApi: env.MAIL_API ? { kind: 'maildev', url: env.MAIL_API } : env.MAILPIT_API ? { kind: 'mailpit', url: env.MAILPIT_API } : null,
    source,
  };
  for (const [name, value] of Object.entries({
    kafka: servers.kafkaBrokers,
    redis: servers.redisUrl,
    mongo: servers.mongoUrl,
    s3: servers.s3,
    smtp: servers.smtpUrl,
  })) {
    source[name] = value ? 'env' : 'none';
  }
  if (!dockerAvailable()) {
    const absent = Object.entries(source)
      .filter(([, from]) => from === 'none')
      .map(([name]) => name);
    if (absent.length > 0)
      requirePrerequisite(`no address for ${absent.join(', ')} in the environment and no Docker (start them with infra/local/servers.sh)`);
    return servers;
  }

  const { GenericContainer, Wait } = await import('testcontainers');
  if (!servers.redisUrl) {
    const redis = await new GenericContainer('redis:7.4.1-alpine').withExposedPorts(6379).start();
    stops.push(() => redis.stop());
    servers.redisUrl = `redis://${redis.getHost()}:${redis.getMappedPort(6379)}`;
    source.redis = 'testcontainers';
  }
  if (!servers.mongoUrl) {
    const mongo = await new GenericContainer('mongo:7.0.14')
      .withExposedPorts(27017)
      .withWaitStrategy(Wait.forLogMessage(/Waiting for connections/))
      .start();
    stops.push(() => mongo.stop());
    servers.mongoUrl = `mongodb://${mongo.getHost()}:${mongo.getMappedPort(27017)}`;
    source.mongo = 'testcontainers';
  }
  if (!servers.kafkaBrokers) {
    const kafka = await new GenericContainer('apache/kafka:3.9.1')
      .withExposedPorts({ container: 9092, host: 39092 })
      .withEnvironment({
        KAFKA_NODE_ID: '1',
        KAFKA_PROCESS_ROLES: 'broker,controller',
        KAFKA_LISTENERS: 'PLAINTEXT://:9092,CONTROLLER://:9093',
        KAFKA_ADVERTISED_LISTENERS: 'PLAINTEXT://localhost:39092',
        KAFKA_CONTROLLER_LISTENER_NAMES: 'CONTROLLER',
        KAFKA_CONTROLLER_QUORUM_VOTERS: '1@localhost:9093',
        KAFKA_OFFSETS_TOPIC_REPLICATION_FACTOR: '1',
        KAFKA_GROUP_INITIAL_REBALANCE_DELAY_MS: '0',
      })
      .withWaitStrategy(Wait.forLogMessage(/Kafka Server started/))
      .start();
    stops.push(() => kafka.stop());
    servers.kafkaBrokers = ['localhost:39092'];
    source.kafka = 'testcontainers';
  }
  if (!servers.s3) {
    // The Versity S3 gateway, as docker-compose.yml and infra/local/servers.sh run it: a bucket is a
    // directory, made before it starts.
    const s3 = await new GenericContainer('versity/versitygw:v1.7.0')
      .withEntrypoint(['/bin/sh', '-c'])
      .withCommand(['mkdir -p /data/portal-test && exec versitygw --port :7070 --region us-east-1 --health /health posix /data'])
      .withEnvironment({ ROOT_ACCESS_KEY_ID: 'portal', ROOT_SECRET_ACCESS_KEY: 'portal-secret-key' })
      .withExposedPorts(7070)
      .withWaitStrategy(Wait.forHttp('/health', 7070))
      .start();
    stops.push(() => s3.stop());
    servers.s3 = {
      endpoint: `http://${s3.getHost()}:${s3.getMappedPort(7070)}`,
      bucket: 'portal-test',
      region: 'us-east-1',
      accessKeyId: 'portal',
      secretAccessKey: 'portal-secret-key',
    };
    source.s3 = 'testcontainers';
  }
  if (!servers.smtpUrl) {
    const mailpit = await new GenericContainer('axllent/mailpit:v1.21.0').withExposedPorts(1025, 8025).start();
    stops.push(() => mailpit.stop());
    servers.smtpUrl = `smtp://${mailpit.getHost()}:${mailpit.getMappedPort(1025)}`;
    servers.mailApi = { kind: 'mailpit', url: `http://${mailpit.getHost()}:${mailpit.getMappedPort(8025)}` };
    source.smtp = 'testcontainers';
  }
  return servers;
}

/** Says, in the test output, which servers are real and which suites will be skipped. */
export function describeSources(servers: InfraServers): string {
  return Object.entries(servers.source)
    .map(
      ([name, from]) =>
        `${name}: ${from === 'none' ? 'NOT AVAILABLE (set its address in the environment or run where Docker exists)' : from}`,
    )
    .join('; ');
}

/** Every message the mail catcher holds, raw (RFC 822). */
export async function caughtMail(api: NonNullable<InfraServers['mailApi']>): Promise<Buffer[]> {
  if (api.kind === 'mailpit') {
    const list = (await (await fetch(`${api.url}/api/v1/messages?limit=200`)).json()) as { messages: { ID: string }[] };
    return Promise.all(
      list.messages.map(async ({ ID }) => Buffer.from(await (await fetch(`${api.url}/api/v1/message/${ID}/raw`)).arrayBuffer())),
    );
  }
  const list = (await (await fetch(`${api.url}/email`)).json()) as { id: string }[];
  return Promise.all(list.map(async ({ id }) => Buffer.from(await (await fetch(`${api.url}/email/${id}/source`)).arrayBuffer())));
}

/**
 * A Redis client for an address nobody listens on (a port just freed): every command fails at
 * once, as when Redis is away. For the tests of what a service does then.
 */
export async function unreachableRedis(): Promise<import('ioredis').Redis> {
  const { createServer } = await import('node:net');
  const { Redis } = await import('ioredis');
  const closed = createServer();
  await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
  const { port } = closed.address() as { port: number };
  await new Promise((resolve) => closed.close(resolve));
  const redis = new Redis(`redis://127.0.0.1:${port}`, {
    lazyConnect: true,
    enableOfflineQueue: false,
    maxRetriesPerRequest: 0,
    retryStrategy: () => null,
  });
  redis.on('error', () => undefined); // (each refused connection; what the service answers is what is checked)
  return redis;
}
