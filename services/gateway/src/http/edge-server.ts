import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { Duplex } from 'node:stream';
import { runWithRequestContext, type RequestContext } from '@portal/platform';

/** What may answer a request before fastify sees it; each returns true when it took the request. */
export interface FrontAnswers {
  /** A public page the gateway has in memory (answer-from-memory.ts). */
  fromMemory: ((req: IncomingMessage, res: ServerResponse) => boolean) | null;
  /** A signed-in read proxied in front of fastify (proxy-fast-path.ts); it may hand the request back to fastify later. */
  fastProxy: {
    take(req: IncomingMessage, res: ServerResponse, fullPath: (req: IncomingMessage, res: ServerResponse) => void): boolean;
  } | null;
  /** While closing, every request goes to fastify, which answers 503 (return503OnClosing). */
  closing: boolean;
}

/**
 * fastify's serverFactory: fastify's own HTTP server with the front answers checked first, and
 * the timeouts fastify sets on a server it makes itself. Every request, whoever answers it, runs
 * in its request context (`contextOf`: the response policy's, whose id is fastify's request id).
 */
export function edgeServerFactory(front: FrontAnswers, contextOf: (req: IncomingMessage) => RequestContext) {
  return (handler: (req: IncomingMessage, res: ServerResponse) => void, factoryOptions: unknown): Server => {
    // fastify hands its processed options (defaults applied) to the factory.
    const options = factoryOptions as {
      http?: object;
      keepAliveTimeout: number;
      requestTimeout: number;
      connectionTimeout: number;
      maxRequestsPerSocket: number;
    };
    const answer = (req: IncomingMessage, res: ServerResponse) => {
      if (front.closing) handler(req, res);
      else if (front.fromMemory?.(req, res)) return;
      else if (!front.fastProxy?.take(req, res, handler)) handler(req, res);
    };
    const server = createServer(options.http ?? {}, (req, res) => runWithRequestContext(contextOf(req), () => answer(req, res)));
    server.keepAliveTimeout = options.keepAliveTimeout;
    server.requestTimeout = options.requestTimeout;
    server.setTimeout(options.connectionTimeout);
    if (options.maxRequestsPerSocket > 0) server.maxRequestsPerSocket = options.maxRequestsPerSocket;
    return server;
  };
}

/**
 * A request Node cannot read (a body shorter than its Content-Length when the client stops, bytes
 * after the body that are no request, headers too large, too slow) is answered on the socket in
 * the portal's error shape, as fastify's own handler does in its own, and the connection closed.
 */
export function answerUnreadableRequest(error: Error & { code?: string }, socket: Duplex): void {
  if (error.code === 'ECONNRESET' || socket.destroyed) return;
  const [status, label, message] =
    error.code === 'ERR_HTTP_REQUEST_TIMEOUT'
      ? [408, 'Request Timeout', 'The request took too long to arrive']
      : error.code === 'HPE_HEADER_OVERFLOW'
        ? [431, 'Request Header Fields Too Large', 'The request headers are too large']
        : [400, 'Bad Request', 'The request could not be read: it was cut off or malformed'];
  const body = JSON.stringify({ code: status === 400 ? 'validation_failed' : 'bad_request', message });
  if (socket.writable) {
    socket.write(
      `HTTP/1.1 ${status} ${label}\r\nContent-Length: ${Buffer.byteLength(body)}\r\nContent-Type: application/json; charset=utf-8\r\nConnection: close\r\n\r\n${body}`,
    );
  }
  socket.destroy();
}
