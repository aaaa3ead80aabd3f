import { pino, type DestinationStream, type Logger, type LoggerOptions } from 'pino';

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

/** Structured JSON logs on stdout, one object per line, each tagged with its service. */
export function createLogger({ service, level, destination }: LoggerSettings): Logger {
  const options: LoggerOptions = {
    level: level ?? process.env.LOG_LEVEL ?? 'info',
    base: { service },
    timestamp: pino.stdTimeFunctions.isoTime,
    redact: { paths: REDACTED_LOG_PATHS, censor: '[redacted]' },
  };
  return destination ? pino(options, destination) : pino(options);
}

/** Query parameters that carry a credential: the e-mail link's token, a reset code, a password. */
const SECRET_QUERY = /([?&](?:token|code|password|secret|session(?:Id)?)=)[^&#]*/gi;

/** A request URL as it may be logged: the values of credential-bearing query parameters hidden. */
export function redactUrl(url: string): string {
  return url.includes('?') ? url.replace(SECRET_QUERY, '$1[redacted]') : url;
}
