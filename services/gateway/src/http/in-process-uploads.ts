import type { IncomingHttpHeaders, IncomingMessage, ServerResponse } from 'node:http';
import { Readable } from 'node:stream';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { handOverRequestBody } from '@portal/platform';

/** A service's handler in this same process (all-in-one), answering on the client's own response. */
export type InProcessHandler = (req: IncomingMessage, res: ServerResponse) => void;

const UPLOADS_PREFIX = '/api/evidence/uploads/';

/**
 * The chunks of a resumable upload (PATCH /api/evidence/uploads/{id}): the requests a phone
 * sends by the hundred for one video, each carrying megabytes. They are what the all-in-one
 * portal hands to the evidence service inside the process.
 */
export function isUploadChunk(method: string, url: string): boolean {
  return method === 'PATCH' && url.startsWith(UPLOADS_PREFIX);
}

/**
 * Hands a request to a service in this same process instead of proxying it over loopback HTTP
 * (where every byte would be written to a socket by the gateway and read back by the service):
 *
 * - the service sees exactly the headers the proxy would have sent (`headers`: the client's
 *   identity headers dropped, the gateway's signed identity header added), in both
 *   `req.headers` and `req.rawHeaders` (readers use one or the other);
 * - it reads the body the gateway's guard passes on (counted, watched for a stalled client:
 *   handOverRequestBody), never the socket itself;
 * - it answers on the client's response, which already carries the gateway's own headers
 *   (request id, security headers); an answer that starts before the body has fully arrived
 *   closes the connection, as the guard does for proxied answers.
 *
 * The gateway's onResponse hooks (log line, metrics, the upload count) still run when the answer
 * has gone; its onSend hooks do not (none applies to an upload chunk).
 */
export function handOver(
  request: FastifyRequest,
  reply: FastifyReply,
  headers: Record<string, string | string[] | undefined>,
  handler: InProcessHandler,
): void {
  const raw = request.raw;
  const plain: IncomingHttpHeaders = {};
  const rawHeaders: string[] = [];
  for (const name in headers) {
    const value = headers[name];
    if (value === undefined) continue;
    plain[name] = value;
    if (Array.isArray(value)) for (const one of value) rawHeaders.push(name, one);
    else rawHeaders.push(name, value);
  }
  raw.headers = plain;
  raw.rawHeaders = rawHeaders;
  if (request.body instanceof Readable) handOverRequestBody(raw, request.body);

  const res = reply.raw;
  for (const [name, value] of Object.entries(reply.getHeaders())) {
    if (value !== undefined) res.setHeader(name, value);
  }
  const writeHead = res.writeHead;
  res.writeHead = function (this: ServerResponse, ...args: unknown[]) {
    if (!raw.complete) this.setHeader('connection', 'close');
    return (writeHead as (...a: unknown[]) => ServerResponse).apply(this, args);
  };
  void reply.hijack();
  handler(raw, res);
}
