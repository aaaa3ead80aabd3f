import { z } from 'zod';

/** The JSON body of every error answer: a stable code for programs and a message for people. */
export const apiErrorSchema = z
  .object({
    code: z.string().meta({ description: 'Stable machine-readable error code', example: 'validation_failed' }),
    message: z.string().meta({ description: 'A sentence a person can read', example: 'Invalid email address' }),
    fields: z.record(z.string(), z.string()).optional().meta({ description: 'Per-field messages, keyed by the request field name' }),
  })
  .meta({ id: 'ApiError' });

export type ApiError = z.infer<typeof apiErrorSchema>;

export const ERROR_CODES = [
  'validation_failed',
  'invalid_credentials',
  'unauthenticated',
  'forbidden',
  'not_found',
  'conflict',
  'payload_too_large',
  'unsupported_media_type',
  'rate_limited',
  'request_timeout',
  'cross_site_request',
  'service_unavailable',
  'internal',
] as const;
export type ErrorCode = (typeof ERROR_CODES)[number];
