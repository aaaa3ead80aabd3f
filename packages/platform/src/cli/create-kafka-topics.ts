#!/usr/bin/env node
import { createLogger } from '../logging/logger.js';
import { infrastructureFromEnv } from '../runtime/infrastructure.js';
import { kafkaTopicsFromEnv } from '../events/kafka-settings.js';
import { createKafkaTopics } from '../events/kafka-topics.js';

// Creates the portal's Kafka topics (the kafka-topics Job of k8s/, the compose file's
// kafka-topics service): KAFKA_BROKERS and its TLS/SASL settings, DEPLOYMENT_NAMESPACE,
// KAFKA_TOPIC_PARTITIONS, KAFKA_REPLICATION_FACTOR, KAFKA_TOPIC_RETENTION_MS and
// DEAD_LETTER_RETENTION_MS (the dead-letter topics; raised on existing ones that keep less).
const logger = createLogger({ service: 'kafka-topics' });
try {
  const infrastructure = infrastructureFromEnv();
  if (!infrastructure.kafkaBrokers) throw new Error('KAFKA_BROKERS is not set');
  const topics = kafkaTopicsFromEnv();
  const { created, existing, raised } = await createKafkaTopics({
    brokers: infrastructure.kafkaBrokers,
    namespace: infrastructure.namespace,
    ...infrastructure.kafka,
    ...topics,
    logger,
  });
  logger.info({ created, existing, raised, ...topics }, created.length ? 'kafka topics created' : 'kafka topics already exist');
  process.exit(0);
} catch (error) {
  logger.error({ err: error }, 'kafka topics could not be created');
  process.exit(1);
}
