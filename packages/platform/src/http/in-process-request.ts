import type { IncomingMessage } from 'node:http';
import type { Readable } from 'node:stream';

/**
 * A request handed from one service to another inside one process (the all-in-one portal's
 * gateway to the evidence service's resumable uploads), without a second HTTP hop over loopback.
 * The gateway reads the client's body through its guard (counted, watched for a client that stops
 * sending); the receiving service reads that stream instead of the socket.
 */
const handedOverBodies = new WeakMap<IncomingMessage, Readable>();

/** Marks `body` as what the receiving service reads for this request's body. */
export function handOverRequestBody(req: IncomingMessage, body: Readable): void {
  handedOverBodies.set(req, body);
}

/** The stream to read a request's body from: the one handed over in this process, else the request itself. */
export function requestBodyOf(req: IncomingMessage): Readable {
  return handedOverBodies.get(req) ?? req;
}

/**
 * Why a handed-over body stopped: the gateway refused it part-way (408: nothing came for too long;
 * 413: a chunked body grew past its limit). The receiving service answers with this status and
 * message, as the gateway would have answered the client itself.
 */
export class RequestBodyRefused extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
  ) {
    super(message);
    this.name = 'RequestBodyRefused';
  }
}
