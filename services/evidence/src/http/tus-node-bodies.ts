/* eslint-disable @typescript-eslint/only-throw-error -- @tus/server's hooks answer an error thrown
   as its own { status_code, body } object (ERRORS, tusError), not an Error instance. */
import type { IncomingMessage } from 'node:http';
import type { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { ERRORS, StreamLimiter, type CancellationContext, type Server, type Upload } from '@tus/server';
import { RequestBodyRefused, requestBodyOf } from '@portal/platform';

/**
 * The one place the evidence service reaches into @tus/server's internals (its PATCH handler's
 * `send`, `writeToStore` and `store`, and srvx's `runtime.node.req`). @tus/server is pinned to an
 * exact version in services/evidence/package.json for this; test/tus-node-bodies.test.ts runs a
 * real tus server with this patch and fails when an upgrade changes any of what it relies on.
 */

/** What tus sends back for an error: our JSON error body with its status. */
export function tusError(status: number, code: string, message: string): { status_code: number; body: string } {
  return { status_code: status, body: JSON.stringify({ code, message }) };
}

/** The parts of @tus/server's PATCH handler that streamPatchBodiesFromNode replaces. */
export interface PatchHandlerInternals {
  send(
    req: Request & { runtime?: { node?: { req?: IncomingMessage } } },
    context: CancellationContext,
    headers?: Headers,
  ): Promise<Response>;
  writeToStore(body: ReadableStream | null, upload: Upload, maxFileSize: number, context: CancellationContext): Promise<number>;
  store: { write(stream: NodeJS.ReadableStream, id: string, offset: number): Promise<number> };
}

/**
 * PATCH bodies go from Node's request straight into the store. @tus/server 2 hands a PATCH body
 * over as a web stream (srvx wraps Node's request with Readable.toWeb, tus turns it back with
 * Readable.fromWeb and pipes it through a PassThrough): every 64 KB chunk crosses two stream
 * adapters, a promise and a copy between queues before it reaches the file. Measured with a
 * 500 MB upload (bench/upload), that round trip was the largest share of the evidence service's
 * CPU per MB after the socket and file writes themselves. Here the request is piped into tus's own
 * size limiter and on to the store, with tus's semantics kept: a body over the limit ends the
 * request with 413 without destroying the connection (the request is unpiped, not destroyed), an
 * aborted request ends the write with what arrived, a request error is ABORTED. Requests that do
 * not come from Node (none in this service) keep tus's own path. A request handed over inside the
 * process (the all-in-one gateway, requestBodyOf) is read from the body stream handed over with it;
 * when the gateway refuses that body part-way (408, 413), its answer is this request's answer.
 */
export function streamPatchBodiesFromNode(tus: Server, afterWrite: (upload: Upload) => void): void {
  const patch = tus.handlers.PATCH as unknown as PatchHandlerInternals;
  const nodeRequests = new WeakMap<CancellationContext, IncomingMessage>();
  const send = patch.send.bind(patch);
  const writeToStore = patch.writeToStore.bind(patch);
  patch.send = (req, context, headers) => {
    const node = req.runtime?.node?.req;
    if (node) {
      nodeRequests.set(context, node);
      // Nothing reads the web body then: srvx creates it (and starts draining the request) on first access.
      Object.defineProperty(req, 'body', { value: null, configurable: true });
    }
    return send(req, context, headers);
  };
  patch.writeToStore = async (body, upload, maxFileSize, context) => {
    const node = nodeRequests.get(context);
    if (!node) return writeToStore(body, upload, maxFileSize, context);
    if (context.signal.aborted) throw ERRORS.ABORTED;
    const input: Readable = requestBodyOf(node);
    const limiter = new StreamLimiter(maxFileSize);
    let sourceError: unknown;
    const onError = (error: unknown) => {
      sourceError = error;
      input.unpipe(limiter);
      if (!context.signal.aborted) limiter.destroy(error as Error);
    };
    const onAbort = () => {
      input.unpipe(limiter);
      if (!limiter.destroyed) limiter.end();
    };
    input.on('error', onError);
    context.signal.addEventListener('abort', onAbort, { once: true });
    try {
      input.pipe(limiter);
      const offset = await pipeline(limiter, async (source: AsyncIterable<Buffer>) =>
        patch.store.write(source as unknown as NodeJS.ReadableStream, upload.id, upload.offset),
      );
      afterWrite(upload);
      return offset;
    } catch (error) {
      input.unpipe(limiter);
      if (sourceError instanceof RequestBodyRefused) throw tusError(sourceError.status, sourceError.code, sourceError.message);
      const aborted = (sourceError !== undefined && error === sourceError) || (error instanceof Error && error.name === 'AbortError');
      throw aborted ? ERRORS.ABORTED : error;
    } finally {
      input.off('error', onError);
      context.signal.removeEventListener('abort', onAbort);
    }
  };
}
