import type { ApiError } from '@portal/contracts';

/** An answer the API refused, or a request that never got an answer (status 0, code 'network'). */
export class ApiRequestError extends Error {
  override readonly name = 'ApiRequestError';

  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly fields: Readonly<Record<string, string>> = {},
    /** For a 429: in how many seconds the limit lets the request through again, when the server said. */
    readonly retryAfterSeconds: number | null = null,
  ) {
    super(message);
  }

  /** True when the server answered and refused the request (4xx), as opposed to failing. */
  get isClientError(): boolean {
    return this.status >= 400 && this.status < 500;
  }
}

export interface RequestOptions {
  method?: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';
  /** A JSON body. */
  json?: unknown;
  /** A multipart body (the browser sets the boundary). */
  form?: FormData;
  signal?: AbortSignal;
  /** More request headers (e.g. Idempotency-Key). */
  headers?: Record<string, string>;
}

/** The shape of apiErrorSchema, checked by hand so that zod stays out of the first-load bundle. */
function isApiError(body: unknown): body is ApiError {
  if (typeof body !== 'object' || body === null) return false;
  const { code, message, fields } = body as Record<string, unknown>;
  return (
    typeof code === 'string' &&
    typeof message === 'string' &&
    (fields === undefined ||
      (typeof fields === 'object' && fields !== null && Object.values(fields).every((value) => typeof value === 'string')))
  );
}

/**
 * When a limit lets requests through again, in seconds: the Retry-After header (seconds or a
 * date), else the t= of the RateLimit header (IETF draft 8, as the identity service sends it).
 */
export function retryAfterOf(headers: Headers, now = Date.now()): number | null {
  const retryAfter = headers.get('retry-after')?.trim();
  if (retryAfter) {
    if (/^\d+$/.test(retryAfter)) return Number(retryAfter);
    const date = Date.parse(retryAfter);
    if (!Number.isNaN(date)) return Math.max(0, Math.ceil((date - now) / 1000));
  }
  const reset = /(?:^|;)\s*t=(\d+)/.exec(headers.get('ratelimit') ?? '');
  return reset ? Number(reset[1]) : null;
}

async function errorFrom(response: Response): Promise<ApiRequestError> {
  const fallback = `The server answered ${response.status}`;
  const retryAfter = response.status === 429 ? retryAfterOf(response.headers) : null;
  try {
    const body: unknown = await response.json();
    if (isApiError(body)) return new ApiRequestError(response.status, body.code, body.message, body.fields ?? {}, retryAfter);
  } catch {
    // not JSON: a proxy's error page, for example
  }
  return new ApiRequestError(response.status, response.status >= 500 ? 'internal' : 'unknown', fallback, {}, retryAfter);
}

/**
 * The one way the app talks to the API: same-origin, with the session cookie, JSON answers.
 * Every failure becomes an ApiRequestError, so callers deal with one type.
 */
export async function apiRequest<T>(path: string, options: RequestOptions = {}): Promise<T> {
  const headers: Record<string, string> = { accept: 'application/json', ...options.headers };
  let body: BodyInit | undefined;
  if (options.json !== undefined) {
    headers['content-type'] = 'application/json';
    body = JSON.stringify(options.json);
  } else if (options.form) {
    body = options.form;
  }
  let response: Response;
  try {
    response = await fetch(path, {
      method: options.method ?? (body === undefined ? 'GET' : 'POST'),
      headers,
      body,
      credentials: 'same-origin',
      signal: options.signal ?? null,
    });
  } catch (error) {
    if (error instanceof DOMException && error.name === 'AbortError') throw error;
    throw new ApiRequestError(0, 'network', error instanceof Error ? error.message : 'The request failed');
  }
  if (!response.ok) throw await errorFrom(response);
  if (response.status === 204) return undefined as T;
  try {
    return (await response.json()) as T;
  } catch {
    throw new ApiRequestError(response.status, 'invalid_response', 'The server sent an answer that is not JSON');
  }
}

/** A person-readable message for a failure, with a fallback for failures that are not answers. */
export function messageOf(error: unknown, fallback: string): string {
  if (error instanceof ApiRequestError && error.isClientError && error.message) return error.message;
  return fallback;
}
