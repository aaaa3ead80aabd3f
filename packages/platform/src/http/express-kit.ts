import type { ErrorRequestHandler, Request, RequestHandler, Router } from 'express';
import { MESSAGES } from '@portal/contracts';
import type { Logger } from 'pino';
import { IDENTITY_HEADER, SERVICE_TOKEN_HEADER, isAdmin, type CallerIdentity, type IdentityTokens } from './caller-identity.js';
import { HttpError, forbidden, unauthenticated } from './http-error.js';
import type { ServiceMetrics } from '../observability/metrics.js';
import { classifyFailure } from '../resilience/failures.js';
import { runReadinessChecks, type HealthCheck } from '../runtime/health-server.js';
import { redactUrl } from '../logging/logger.js';
import { httpRequestContext, runInHttpRequestContext, setRequestCaller } from '../context/request-context.js';

declare global {
  namespace Express {
    interface Request {
      /** Who is calling, as vouched for by the gateway; undefined for visitors. */
      caller?: CallerIdentity;
    }
  }
}

/** The level of a request's line: errors (and 5xx) as errors, refusals as info, the rest at debug. */
export function requestLogLevel(statusCode: number, error?: unknown): 'error' | 'info' | 'debug' {
  return error || statusCode >= 500 ? 'error' : statusCode >= 400 ? 'info' : 'debug';
}

/**
 * Writes a request's line, if its level is written at all: `req` (id, method, URL with credentials
 * hidden), `res` (status), `responseTime` (ms), and `err` for a failed request.
 */
export function logRequest(
  logger: Logger,
  req: { id: string; method: string; url: string },
  statusCode: number,
  startedAt: number,
  error?: unknown,
): void {
  const level = requestLogLevel(statusCode, error);
  // Most answers are 2xx at debug, which production does not write: nothing is built for them.
  if (!logger.isLevelEnabled(level)) return;
  const line = {
    req: { id: req.id, method: req.method, url: redactUrl(req.url) },
    res: { statusCode },
    responseTime: Date.now() - startedAt,
  };
  if (error || statusCode >= 500) {
    logger[level]({ ...line, err: error ?? new Error(`failed with status code ${statusCode}`) }, 'request errored');
  } else {
    logger[level](line, 'request completed');
  }
}

/**
 * The first middleware of a service's app: the rest of the request's handling runs in its request
 * context (context/request-context.ts), the gateway's x-request-id as its id. Domain code reads the
 * id from there (the events and audit entries it makes, its log lines); nothing passes it along.
 */
export function requestContext(): RequestHandler {
  return (req, _res, next) => runInHttpRequestContext(req, next);
}

/**
 * Structured request logs carrying the request context's id: on the answer (x-request-id), and one
 * line per request when it ends (logRequest). The same lines as pino-http wrote, without its
 * per-request child logger.
 */
export function requestLogging(logger: Logger): RequestHandler {
  return (req, res, next) => {
    const id = requestId(req);
    res.setHeader('x-request-id', id);
    const startedAt = Date.now();
    const url = req.originalUrl;
    const ended = (error?: unknown) => {
      res.removeListener('finish', ended);
      res.removeListener('close', ended);
      res.removeListener('error', ended);
      logRequest(logger, { id, method: req.method, url }, res.statusCode, startedAt, error);
    };
    res.on('finish', ended);
    res.on('close', ended);
    res.on('error', ended);
    next();
  };
}

/** The request id (its request context's: from the gateway's x-request-id, or made here). */
export function requestId(req: Request): string {
  return httpRequestContext(req).requestId ?? '';
}

/** Reads the gateway's signed identity header, if any. A header that does not verify is a 401. */
export function callerIdentity(tokens: IdentityTokens): RequestHandler {
  return (req, _res, next) => {
    const token = req.headers[IDENTITY_HEADER];
    if (typeof token !== 'string' || token.length === 0) return next();
    tokens.verifyCaller(token).then(
      (identity) => {
        req.caller = identity;
        setRequestCaller(req, identity);
        next();
      },
      () => next(unauthenticated()),
    );
  };
}

export function requireCaller(req: Request): CallerIdentity {
  if (!req.caller) throw unauthenticated();
  return req.caller;
}

/**
 * Refuses a visitor before the request body is read: nobody streams a file to the server's disk
 * only to be told to log in afterwards.
 */
export function signedInOnly(): RequestHandler {
  return (req, _res, next) => next(req.caller ? undefined : unauthenticated());
}

export function requireAdmin(req: Request): CallerIdentity {
  const caller = requireCaller(req);
  if (!isAdmin(caller)) throw forbidden();
  return caller;
}

/** Internal routes: only a caller holding a valid service token gets through. */
export function requireServiceToken(tokens: IdentityTokens): RequestHandler {
  return (req, _res, next) => {
    const token = req.headers[SERVICE_TOKEN_HEADER];
    if (typeof token !== 'string') return next(forbidden('Internal route'));
    tokens.verifyService(token).then(
      () => next(),
      () => next(forbidden('Internal route')),
    );
  };
}

/** Wraps an async route so that a thrown error reaches the error handler. */
export function route(handler: (req: Request, res: Parameters<RequestHandler>[1]) => Promise<unknown>): RequestHandler {
  return (req, res, next) => {
    handler(req, res).catch(next);
  };
}

export function notFoundHandler(): RequestHandler {
  return (_req, _res, next) => next(new HttpError(404, 'not_found', MESSAGES.notFound));
}

interface BodyParserError {
  type?: string;
  status?: number;
  expose?: boolean;
}

/** The last middleware: every error becomes a JSON answer; unexpected ones are logged as 500s. */
export function errorHandler(logger: Logger): ErrorRequestHandler {
  return (error: unknown, req, res, _next) => {
    const httpError = toHttpError(error);
    if (httpError.status >= 500) {
      logger.error({ req: { id: requestId(req), method: req.method, url: redactUrl(req.originalUrl) }, err: error }, 'request failed');
    }
    if (res.headersSent) {
      res.destroy();
      return;
    }
    if (httpError.status === 503) res.set('retry-after', '30');
    res.status(httpError.status).json(httpError.toJSON());
  };
}

/** What busboy (under multer) throws for a form it cannot read, in words for the person sending it. */
const FORM_PARSER_ERRORS = new Map<string, string>([
  ['Malformed part header', 'The upload was cut off or malformed'],
  ['Unexpected end of form', 'The upload was cut off or malformed'],
  ['Unexpected end of file', 'The upload was cut off or malformed'],
  ['Multipart: Boundary not found', 'The form could not be read: its Content-Type names no multipart boundary'],
  ['Malformed content type', 'The form could not be read: its Content-Type is malformed'],
  ['Malformed urlencoded form', 'The form could not be read: it is malformed'],
]);

export function toHttpError(error: unknown): HttpError {
  if (error instanceof HttpError) return error;
  const parserError = error as BodyParserError;
  if (parserError?.type === 'entity.parse.failed') return new HttpError(400, 'validation_failed', MESSAGES.malformedJson);
  if (parserError?.type === 'entity.too.large') return new HttpError(413, 'payload_too_large', 'The request body is too large');
  if (parserError?.type === 'encoding.unsupported' || parserError?.type === 'charset.unsupported') {
    return new HttpError(415, 'unsupported_media_type', 'Unsupported request encoding');
  }
  const multerError = error as { name?: string; code?: string; field?: string };
  if (multerError?.name === 'MulterError') {
    if (multerError.code === 'LIMIT_FILE_SIZE') return new HttpError(413, 'payload_too_large', 'The file is too large');
    if (multerError.code === 'LIMIT_UNEXPECTED_FILE') {
      return new HttpError(400, 'validation_failed', `Unexpected file field ${multerError.field ?? ''}`.trim());
    }
    return new HttpError(400, 'validation_failed', 'The upload could not be read');
  }
  const formProblem = FORM_PARSER_ERRORS.get((error as Error | undefined)?.message ?? '');
  if (formProblem) return new HttpError(400, 'validation_failed', formProblem);
  if (typeof parserError?.status === 'number' && parserError.status >= 400 && parserError.status < 500 && parserError.expose) {
    return new HttpError(parserError.status, 'validation_failed', (error as Error).message);
  }
  // A store or server the request needs is away (the same policy the consumers follow): nothing
  // was done that cannot be asked again, and it will work once that dependency answers.
  if (classifyFailure(error).kind === 'dependency') return new HttpError(503, 'service_unavailable', MESSAGES.dependencyAway);
  return new HttpError(500, 'internal', MESSAGES.internal);
}

export type ReadinessCheck = HealthCheck;

/** GET /healthz (the process answers) and GET /readyz (it serves; its dependencies' states in the body: runReadinessChecks). */
export function healthRoutes(router: Router, checks: ReadinessCheck[]): void {
  router.get('/healthz', (_req, res) => {
    res.json({ status: 'ok' });
  });
  router.get('/readyz', (_req, res) => {
    runReadinessChecks(checks).then(
      ({ ready, body }) => res.status(ready ? 200 : 503).json(body),
      () => res.status(503).json({ status: 'not ready' }),
    );
  });
}

/** GET /metrics in Prometheus' text format (services are reachable only inside the cluster). */
export function metricsRoute(router: Router, metrics: ServiceMetrics): void {
  router.get('/metrics', (_req, res) => {
    metrics.text().then(
      (text) => res.type(metrics.contentType()).send(text),
      () => res.status(500).end(),
    );
  });
}
