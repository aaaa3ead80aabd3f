import { pino, type Logger, type LoggerOptions } from 'pino';

export type { Logger } from 'pino';

export interface LoggerSettings {
  service: string;
  level?: string;
}

/** Structured JSON logs on stdout, one object per line, each tagged with its service. */
export function createLogger({ service, level }: LoggerSettings): Logger {
  const options: LoggerOptions = {
    level: level ?? process.env.LOG_LEVEL ?? 'info',
    base: { service },
    timestamp: pino.stdTimeFunctions.isoTime,
    redact: {
      paths: [
        'req.headers.cookie',
        'req.headers.authorization',
        'req.headers["x-portal-identity"]',
        'res.headers["set-cookie"]',
        '*.password',
      ],
      censor: '[redacted]',
    },
  };
  return pino(options);
}
