import { join } from 'node:path';
import { hostname } from 'node:os';
import { z } from 'zod';
import type { Logger } from 'pino';
import { envBoolean, parseEnv } from '../config/env.js';
import type { EventBus } from '../events/event-bus.js';
import { KafkaEventBus } from '../events/kafka-event-bus.js';
import {
  describeKafkaConnection,
  kafkaConnectionFromEnv,
  kafkaTopicsFromEnv,
  type KafkaConnectionSettings,
} from '../events/kafka-settings.js';
import { SqliteEventBus } from '../events/sqlite-event-bus.js';
import type { BlobStore } from '../blobs/blob-store.js';
import { FsBlobStore } from '../blobs/fs-blob-store.js';
import { S3BlobStore, type S3BlobStoreOptions } from '../blobs/s3-blob-store.js';
import type { JobQueue } from '../jobs/job-queue.js';
import { BullMqJobQueue } from '../jobs/bullmq-job-queue.js';
import { SqliteJobQueue } from '../jobs/sqlite-job-queue.js';
import { SERIAL_WRITES_SETTINGS, type SerialWritesSetting } from '../mongo/serial-writes.js';

/**
 * Which infrastructure a service uses, from the environment alone: each distributed adapter is
 * chosen by its address being set; without it the embedded adapter under DATA_DIR is used.
 */
export interface InfrastructureSettings {
  dataDir: string;
  kafkaBrokers: string[] | null;
  /** TLS and SASL of the Kafka client (KAFKA_SSL*, KAFKA_SASL_*). */
  kafka: KafkaConnectionSettings;
  redisUrl: string | null;
  mongoUrl: string | null;
  /** MONGO_SERIAL_WRITES: whether MongoDB updates of one collection queue in this process (default auto: ask the server). */
  mongoSerialWrites?: SerialWritesSetting;
  s3: S3BlobStoreOptions | null;
  /** Prefix of Kafka consumer groups and Redis keys, so that deployments can share servers. */
  namespace: string;
  /** This process, for consumer groups that every instance needs on its own (cache eviction). */
  instanceId: string;
  /** The embedded bus deletes a message this long after every consumer group handled it (ms). */
  busPruneAfterMs?: number;
  /** How long the embedded bus keeps dead letters (DEAD_LETTER_RETENTION_MS; Kafka's: the kafka-topics Job). */
  deadLetterRetentionMs?: number;
}

const infrastructureEnvSchema = z.object({
  DATA_DIR: z.string().default('./data'),
  KAFKA_BROKERS: z
    .string()
    .regex(/^[^,\s]+(,[^,\s]+)*$/, 'must be host:port[,host:port...]')
    .optional(),
  REDIS_URL: z
    .string()
    .regex(/^rediss?:\/\//, 'must be a redis:// or rediss:// URL')
    .optional(),
  MONGO_URL: z
    .string()
    .regex(/^mongodb(\+srv)?:\/\//, 'must be a mongodb:// URL')
    .optional(),
  MONGO_SERIAL_WRITES: z.enum(SERIAL_WRITES_SETTINGS).default('auto'),
  S3_ENDPOINT: z.string().optional(),
  S3_BUCKET: z.string().optional(),
  S3_REGION: z.string().default('us-east-1'),
  S3_ACCESS_KEY_ID: z.string().optional(),
  S3_SECRET_ACCESS_KEY: z.string().optional(),
  S3_FORCE_PATH_STYLE: envBoolean.default(true),
  S3_PREFIX: z.string().optional(),
  DEPLOYMENT_NAMESPACE: z
    .string()
    .regex(/^[a-z0-9-]+$/)
    .default('portal'),
  INSTANCE_ID: z.string().optional(),
  BUS_PRUNE_AFTER_MS: z.coerce.number().int().min(0).default(60_000),
});

export function infrastructureFromEnv(env: NodeJS.ProcessEnv = process.env): InfrastructureSettings {
  const parsed = parseEnv(infrastructureEnvSchema, env);
  return {
    dataDir: parsed.DATA_DIR,
    kafkaBrokers: parsed.KAFKA_BROKERS ? parsed.KAFKA_BROKERS.split(',') : null,
    kafka: parsed.KAFKA_BROKERS ? kafkaConnectionFromEnv(env) : {},
    redisUrl: parsed.REDIS_URL ?? null,
    mongoUrl: parsed.MONGO_URL ?? null,
    mongoSerialWrites: parsed.MONGO_SERIAL_WRITES,
    s3: parsed.S3_BUCKET
      ? {
          bucket: parsed.S3_BUCKET,
          region: parsed.S3_REGION,
          forcePathStyle: parsed.S3_FORCE_PATH_STYLE,
          ...(parsed.S3_ENDPOINT ? { endpoint: parsed.S3_ENDPOINT } : {}),
          ...(parsed.S3_ACCESS_KEY_ID ? { accessKeyId: parsed.S3_ACCESS_KEY_ID } : {}),
          ...(parsed.S3_SECRET_ACCESS_KEY ? { secretAccessKey: parsed.S3_SECRET_ACCESS_KEY } : {}),
          ...(parsed.S3_PREFIX ? { prefix: parsed.S3_PREFIX } : {}),
        }
      : null,
    namespace: parsed.DEPLOYMENT_NAMESPACE,
    instanceId: parsed.INSTANCE_ID ?? hostname(),
    busPruneAfterMs: parsed.BUS_PRUNE_AFTER_MS,
    deadLetterRetentionMs: kafkaTopicsFromEnv(env).deadLetterRetentionMs,
  };
}

export function createEventBus(settings: InfrastructureSettings, clientId: string, logger: Logger): EventBus {
  return settings.kafkaBrokers
    ? new KafkaEventBus({ brokers: settings.kafkaBrokers, clientId, logger, namespace: settings.namespace, ...settings.kafka })
    : new SqliteEventBus({
        file: join(settings.dataDir, 'bus.sqlite'),
        logger,
        ...(settings.busPruneAfterMs !== undefined ? { pruneAfterMs: settings.busPruneAfterMs } : {}),
        ...(settings.deadLetterRetentionMs !== undefined ? { deadLetterRetentionMs: settings.deadLetterRetentionMs } : {}),
      });
}

export function createBlobStore(settings: InfrastructureSettings): BlobStore {
  return settings.s3 ? new S3BlobStore({ prefix: settings.namespace, ...settings.s3 }) : new FsBlobStore(join(settings.dataDir, 'blobs'));
}

export function createJobQueue<T>(
  settings: InfrastructureSettings,
  queue: string,
  logger: Logger,
  options: { keepCompletedMs?: number } = {},
): JobQueue<T> {
  return settings.redisUrl
    ? new BullMqJobQueue<T>({ queue, redisUrl: settings.redisUrl, logger, prefix: settings.namespace, ...options })
    : new SqliteJobQueue<T>({ file: join(settings.dataDir, 'jobs.sqlite'), queue, logger, ...options });
}

/** Names the adapters in use, for the start-up log line. */
export function describeInfrastructure(settings: InfrastructureSettings): Record<string, string> {
  return {
    bus: settings.kafkaBrokers
      ? `kafka ${settings.kafkaBrokers.join(',')} (${describeKafkaConnection(settings.kafka)})`
      : 'embedded (SQLite log)',
    jobs: settings.redisUrl ? 'bullmq (redis)' : 'embedded (SQLite)',
    blobs: settings.s3 ? `s3 ${settings.s3.endpoint ?? 'aws'}/${settings.s3.bucket}` : 'files',
    documents: settings.mongoUrl ? `mongodb (serial writes: ${settings.mongoSerialWrites ?? 'auto'})` : 'embedded (SQLite)',
  };
}
