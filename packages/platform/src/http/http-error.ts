import { MESSAGES, type ErrorCode } from '@portal/contracts';
import type { z } from 'zod';

/** An error that becomes an HTTP answer with a JSON body { code, message, fields? }. */
export class HttpError extends Error {
  override name = 'HttpError';
  constructor(
    readonly status: number,
    readonly code: ErrorCode,
    message: string,
    readonly fields?: Record<string, string>,
  ) {
    super(message);
  }

  toJSON(): { code: ErrorCode; message: string; fields?: Record<string, string> } {
    return { code: this.code, message: this.message, ...(this.fields ? { fields: this.fields } : {}) };
  }
}

export const badRequest = (message: string, fields?: Record<string, string>) => new HttpError(400, 'validation_failed', message, fields);
export const unauthenticated = (message: string = MESSAGES.notSignedIn) => new HttpError(401, 'unauthenticated', message);
export const forbidden = (message: string = MESSAGES.forbidden) => new HttpError(403, 'forbidden', message);
export const notFound = (message: string = MESSAGES.notFound) => new HttpError(404, 'not_found', message);
export const conflict = (message: string, fields?: Record<string, string>) => new HttpError(409, 'conflict', message, fields);
export const payloadTooLarge = (message: string) => new HttpError(413, 'payload_too_large', message);
export const unsupportedMediaType = (message: string, fields?: Record<string, string>) =>
  new HttpError(415, 'unsupported_media_type', message, fields);

/**
 * Validates input with a shared schema. On failure the answer is a 400 whose message is the first
 * problem (the same sentence the browser shows) and whose fields hold one message per field.
 */
export function parseInput<S extends z.ZodType>(schema: S, input: unknown): z.output<S> {
  const result = schema.safeParse(input ?? {});
  if (result.success) return result.data;
  const fields: Record<string, string> = {};
  for (const issue of result.error.issues) {
    const name = issue.path.map(String).join('.') || '_';
    fields[name] ??= issue.message;
  }
  throw badRequest(result.error.issues[0]?.message ?? 'Invalid request', fields);
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** A route's id parameter: anything that is not a UUID cannot name a record, so it is a 404. */
export function uuidParam(value: unknown, missingMessage: string): string {
  const id = String(value);
  if (!UUID.test(id)) throw notFound(missingMessage);
  return id;
}
