import { pino, type DestinationStream, type Logger, type LoggerOptions } from 'pino';
import { currentRequestId } from '../context/request-context.js';

export type { Logger } from 'pino';

export interface LoggerSettings {
  service: string;
  level?: string;
  /** Where the lines go (stdout when absent): tests capture them to check what is written. */
  destination?: DestinationStream;
}

/**
 * Fields never written as they are. Request logs carry only id, method and URL (see
 * requestLogging), so these are the second line of defence: a header, a body or an object that
 * reaches a log line by mistake.
 */
export const REDACTED_LOG_PATHS = [
  'req.headers.cookie',
  'req.headers.authorization',
  'req.headers["x-portal-identity"]',
  'req.headers["x-portal-service"]',
  'res.headers["set-cookie"]',
  'headers.cookie',
  'headers["x-portal-identity"]',
  'headers["x-portal-service"]',
  'password',
  '*.password',
  '*.newPassword',
  '*.sessionId',
  '*.sessionRawId',
  '*.token',
];

/**
 * What every line gets from the request context (context/request-context.ts): `requestId`, the id
 * of the request (or of the request behind the event or job) the code that writes it runs for.
 * A request's own line (`req`, with its id) already names it.
 */
export function requestIdMixin(line: object): object {
  const requestId = currentRequestId();
  // A new object each time: pino merges the line's fields into what the mixin answers.
  return requestId === undefined || 'req' in line ? {} : { requestId };
}

/** Structured JSON logs on stdout, one object per line, each tagged with its service (and its request: requestIdMixin). */
export function createLogger({ service, level, destination }: LoggerSettings): Logger {
  const options: LoggerOptions = {
    level: level ?? process.env.LOG_LEVEL ?? 'info',
    base: { service },
    timestamp: pino.stdTimeFunctions.isoTime,
    redact: { paths: REDACTED_LOG_PATHS, censor: '[redacted]' },
    mixin: requestIdMixin,
  };
  return destination ? pino(options, destination) : pino(options);
}

/** Query parameters that carry a credential: the e-mail link's token, a reset code, a password. */
const SECRET_QUERY = /([?&](?:token|code|password|secret|session(?:Id)?)=)[^&#]*/gi;

/** A request URL as it may be logged: the values of credential-bearing query parameters hidden. */
export function redactUrl(url: string): string {
  return url.includes('?') ? url.replace(SECRET_QUERY, '$1[redacted]') : url;
}
