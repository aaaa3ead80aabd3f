import { readFileSync } from 'node:fs';
import type { ConnectionOptions } from 'node:tls';
import type { SASLOptions } from 'kafkajs';
import { z } from 'zod';
import { envBoolean, parseEnv } from '../config/env.js';
import { DEFAULT_DEAD_LETTER_RETENTION_MS } from './event-bus.js';

/** How the Kafka client reaches the brokers: TLS and SASL, as managed Kafka services require. */
export interface KafkaConnectionSettings {
  ssl?: ConnectionOptions | boolean;
  sasl?: SASLOptions;
}

/** How the portal's topics are made (by the kafka-topics Job, or a test's set-up). */
export interface KafkaTopicSettings {
  partitions: number;
  replicationFactor: number;
  /** retention.ms of every topic: events carry names and e-mail addresses; consumers need minutes. */
  retentionMs: number;
  /** retention.ms of the dead-letter topics: long enough for someone to see them and replay them. */
  deadLetterRetentionMs: number;
}

const kafkaEnvSchema = z
  .object({
    KAFKA_SSL: envBoolean.default(false),
    KAFKA_SSL_CA_FILE: z.string().optional(),
    KAFKA_SSL_REJECT_UNAUTHORIZED: envBoolean.default(true),
    KAFKA_SASL_MECHANISM: z
      .enum(['plain', 'scram-sha-256', 'scram-sha-512'], { error: 'must be plain, scram-sha-256 or scram-sha-512' })
      .optional(),
    KAFKA_SASL_USERNAME: z.string().optional(),
    KAFKA_SASL_PASSWORD: z.string().optional(),
    KAFKA_TOPIC_PARTITIONS: z.coerce.number().int().min(1).max(1000).default(3),
    KAFKA_REPLICATION_FACTOR: z.coerce.number().int().min(1).max(10).default(1),
    KAFKA_TOPIC_RETENTION_MS: z.coerce
      .number()
      .int()
      .min(60_000)
      .default(3 * 24 * 3_600_000),
    DEAD_LETTER_RETENTION_MS: z.coerce.number().int().min(60_000).default(DEFAULT_DEAD_LETTER_RETENTION_MS),
  })
  .superRefine((env, context) => {
    if (env.KAFKA_SASL_MECHANISM && (!env.KAFKA_SASL_USERNAME || !env.KAFKA_SASL_PASSWORD)) {
      context.addIssue({
        code: 'custom',
        path: ['KAFKA_SASL_USERNAME'],
        message: `KAFKA_SASL_MECHANISM=${env.KAFKA_SASL_MECHANISM} needs KAFKA_SASL_USERNAME and KAFKA_SASL_PASSWORD`,
      });
    }
    if (!env.KAFKA_SASL_MECHANISM && (env.KAFKA_SASL_USERNAME || env.KAFKA_SASL_PASSWORD)) {
      context.addIssue({
        code: 'custom',
        path: ['KAFKA_SASL_MECHANISM'],
        message: 'KAFKA_SASL_USERNAME is set: say which mechanism (plain, scram-sha-256 or scram-sha-512)',
      });
    }
  });

export function kafkaConnectionFromEnv(env: NodeJS.ProcessEnv = process.env): KafkaConnectionSettings {
  const parsed = parseEnv(kafkaEnvSchema, env);
  const settings: KafkaConnectionSettings = {};
  const customTls = parsed.KAFKA_SSL_CA_FILE !== undefined || !parsed.KAFKA_SSL_REJECT_UNAUTHORIZED;
  if (parsed.KAFKA_SSL) {
    settings.ssl = customTls
      ? {
          rejectUnauthorized: parsed.KAFKA_SSL_REJECT_UNAUTHORIZED,
          ...(parsed.KAFKA_SSL_CA_FILE ? { ca: [readFileSync(parsed.KAFKA_SSL_CA_FILE, 'utf8')] } : {}),
        }
      : true;
  }
  if (parsed.KAFKA_SASL_MECHANISM) {
    settings.sasl = {
      mechanism: parsed.KAFKA_SASL_MECHANISM,
      username: parsed.KAFKA_SASL_USERNAME!,
      password: parsed.KAFKA_SASL_PASSWORD!,
    };
  }
  return settings;
}

export function kafkaTopicsFromEnv(env: NodeJS.ProcessEnv = process.env): KafkaTopicSettings {
  const parsed = parseEnv(kafkaEnvSchema, env);
  return {
    partitions: parsed.KAFKA_TOPIC_PARTITIONS,
    replicationFactor: parsed.KAFKA_REPLICATION_FACTOR,
    retentionMs: parsed.KAFKA_TOPIC_RETENTION_MS,
    deadLetterRetentionMs: parsed.DEAD_LETTER_RETENTION_MS,
  };
}

/** Names the connection for the start-up log line (never the credentials). */
export function describeKafkaConnection(settings: KafkaConnectionSettings): string {
  return [settings.ssl ? 'TLS' : 'plaintext', settings.sasl ? `SASL ${settings.sasl.mechanism}` : null].filter(Boolean).join(', ');
}
