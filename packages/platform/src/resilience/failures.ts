import type { z } from 'zod';

/**
 * The one policy every consumer and job of the portal follows when its work fails: a failure is
 * either the work's own (a poison message: malformed, failing its schema, a rule that will never
 * pass; trying again cannot help) or a dependency's (Kafka, MongoDB, Redis, S3, the mail server,
 * the text provider, a neighbouring service away or slow: trying again later will). Poison becomes
 * a dead letter (events) or a failed job; a dependency's failure holds the work until the
 * dependency answers, and loses nothing. See docs/decisions/0045-dependencies-away-hold-the-work.md.
 */

/** A message (or job) that can never be handled: it goes to the dead letters at once, no retry. */
export class PoisonMessageError extends Error {
  override name = 'PoisonMessageError';
}

/** A dependency did not answer; the same work will succeed once it does. */
export class DependencyUnavailableError extends Error {
  override name = 'DependencyUnavailableError';
  constructor(
    /** What is away: kafka, mongodb, redis, s3, smtp, sms, identity, evidence... */
    readonly dependency: string,
    message: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }
}

export type FailureKind =
  | { kind: 'poison'; reason: string }
  | { kind: 'dependency'; dependency: string; reason: string }
  /** Neither recognised: retried a few times, then treated as the work's own (a bug, most often). */
  | { kind: 'unknown'; reason: string };

/** Node's and undici's codes of a connection that could not be made, was cut, or timed out. */
const NETWORK_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ECONNABORTED',
  'ETIMEDOUT',
  'EPIPE',
  'EHOSTUNREACH',
  'EHOSTDOWN',
  'ENETUNREACH',
  'ENETDOWN',
  'ENOTFOUND',
  'EAI_AGAIN',
  'ESOCKETTIMEDOUT',
  'UND_ERR_CONNECT_TIMEOUT',
  'UND_ERR_HEADERS_TIMEOUT',
  'UND_ERR_BODY_TIMEOUT',
  'UND_ERR_SOCKET',
  'UND_ERR_CLOSED',
]);

/** MongoDB driver errors of a server that cannot be reached, has no primary, or is stepping down. */
const MONGO_NAMES = new Set([
  'MongoNetworkError',
  'MongoNetworkTimeoutError',
  'MongoServerSelectionError',
  'MongooseServerSelectionError',
  'MongoNotConnectedError',
  'MongoTopologyClosedError',
  'MongoPoolClearedError',
  'MongoServerClosedError',
  'MongoWaitQueueTimeoutError',
]);
/** Server error codes of a replica set between primaries or shutting down (NotWritablePrimary, PrimarySteppedDown...). */
const MONGO_TRANSIENT_CODES = new Set([6, 7, 89, 91, 189, 262, 9001, 10107, 11600, 11602, 13435, 13436]);

/** ioredis (and BullMQ over it) while Redis is away. */
const REDIS_AWAY = /^Connection is closed\.|^Stream isn't writeable and enableOfflineQueue|max retries per request limit/;
/** Redis's own answers while it loads its data or fails over. */
const REDIS_BUSY = /^(LOADING|READONLY|MASTERDOWN|TRYAGAIN|CLUSTERDOWN) /;

/** nodemailer's codes of an SMTP server that could not be reached or talked to. */
const SMTP_CODES = new Set(['ECONNECTION', 'ETIMEDOUT', 'ESOCKET', 'EDNS', 'ETLS', 'EENVELOPE_TEMP']);

interface ErrorShape {
  name?: string;
  message?: string;
  code?: unknown;
  errorLabels?: unknown;
  errorLabelSet?: unknown;
  responseCode?: unknown;
  command?: unknown;
  retriable?: unknown;
  $metadata?: { httpStatusCode?: number };
  $fault?: unknown;
  $retryable?: unknown;
  cause?: unknown;
  errors?: unknown;
}

function shapeOf(error: unknown): ErrorShape | null {
  return typeof error === 'object' && error !== null ? (error as ErrorShape) : null;
}

function hasLabel(error: ErrorShape, label: string): boolean {
  if (Array.isArray(error.errorLabels) && error.errorLabels.includes(label)) return true;
  return error.errorLabelSet instanceof Set && error.errorLabelSet.has(label);
}

/** Which dependency an error of one well-known client says is away; null when it says nothing of the kind. */
function dependencyOf(error: ErrorShape): string | null {
  const name = error.name ?? '';
  const message = error.message ?? '';
  if (error instanceof DependencyUnavailableError) return error.dependency;
  // MongoDB and mongoose: no server, no primary, a pool cleared by a failover, commands buffered too long.
  if (MONGO_NAMES.has(name)) return 'mongodb';
  if (name.startsWith('Mongo') && (hasLabel(error, 'RetryableWriteError') || hasLabel(error, 'TransientTransactionError')))
    return 'mongodb';
  if (name.startsWith('Mongo') && typeof error.code === 'number' && MONGO_TRANSIENT_CODES.has(error.code)) return 'mongodb';
  if (name === 'MongooseError' && /buffering timed out|Connection was force closed|Client must be connected/i.test(message))
    return 'mongodb';
  // Kafka (kafkajs): connections, brokers, leaders, timeouts. A protocol error the broker says is
  // final (a message too large, an authorisation refused) is not an absence.
  if (name.startsWith('KafkaJS')) return name === 'KafkaJSProtocolError' && error.retriable === false ? null : 'kafka';
  // Redis (ioredis, BullMQ).
  if (name === 'MaxRetriesPerRequestError' || REDIS_AWAY.test(message) || (name === 'ReplyError' && REDIS_BUSY.test(message)))
    return 'redis';
  // S3 (AWS SDK v3): the server's own 5xx, throttling, timeouts.
  if (error.$metadata !== undefined || error.$fault !== undefined) {
    const status = error.$metadata?.httpStatusCode;
    if (typeof error.code === 'string' && NETWORK_CODES.has(error.code)) return 's3';
    if ((status !== undefined && (status >= 500 || status === 429 || status === 408)) || error.$retryable !== undefined) return 's3';
    if (/^(TimeoutError|RequestTimeout|RequestTimeoutException|SlowDown|ServiceUnavailable|InternalError|ThrottlingException)$/.test(name))
      return 's3';
  }
  // SMTP (nodemailer): the server could not be reached, or said "try again later" (4xx).
  if (typeof error.code === 'string' && SMTP_CODES.has(error.code) && (error.code !== 'ETIMEDOUT' || error.command !== undefined))
    return 'smtp';
  if (typeof error.responseCode === 'number' && error.responseCode >= 400 && error.responseCode < 500) return 'smtp';
  return null;
}

/**
 * Whether a failure is the work's own (poison), a dependency's (hold the work and try again when it
 * answers), or neither recognised. Walks the error's causes (a library's wrapper around a socket
 * error) and the errors of an AggregateError.
 */
export function classifyFailure(error: unknown): FailureKind {
  const reason = describeError(error);
  const seen = new Set<unknown>();
  const queue: unknown[] = [error];
  let network = false;
  while (queue.length > 0) {
    const current = shapeOf(queue.shift());
    if (!current || seen.has(current)) continue;
    seen.add(current);
    if (current instanceof PoisonMessageError || current.name === 'ZodError' || current instanceof SyntaxError) {
      return { kind: 'poison', reason };
    }
    const dependency = dependencyOf(current);
    if (dependency) return { kind: 'dependency', dependency, reason };
    if (typeof current.code === 'string' && NETWORK_CODES.has(current.code)) network = true;
    // fetch's "fetch failed" (undici) and a timed-out or aborted request to a neighbouring service.
    if (current.name === 'TimeoutError' || (current.name === 'TypeError' && current.message === 'fetch failed')) network = true;
    if (current.cause !== undefined) queue.push(current.cause);
    const inner = current.errors;
    if (Array.isArray(inner)) queue.push(...(inner as unknown[]));
  }
  return network ? { kind: 'dependency', dependency: 'network', reason } : { kind: 'unknown', reason };
}

/** One line naming an error and its first cause, for logs and dead-letter headers. */
export function describeError(error: unknown): string {
  const shape = shapeOf(error);
  if (!shape) return String(error);
  const own = shape.message || shape.name || String(error);
  const cause = shapeOf(shape.cause);
  const text = cause?.message && !own.includes(cause.message) ? `${own} (${cause.message})` : own;
  return text.slice(0, 500);
}

/**
 * The data of an event this consumer handles, checked against its schema: a PoisonMessageError
 * (a dead letter, visible and replayable once the producer or the schema is mended) when it does
 * not pass, instead of an event dropped in silence.
 */
export function parseEventData<S extends z.ZodType>(schema: S, value: { id?: string; type?: string; data?: unknown }): z.infer<S> {
  const parsed = schema.safeParse(value.data);
  if (parsed.success) return parsed.data;
  const issues = parsed.error.issues
    .slice(0, 3)
    .map((issue) => `${issue.path.join('.') || 'data'}: ${issue.message}`)
    .join('; ');
  throw new PoisonMessageError(`event ${value.id ?? '?'} (${value.type ?? '?'}) does not match its schema: ${issues}`);
}
