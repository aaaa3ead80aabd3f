import { Transform, type Readable, type TransformCallback } from 'node:stream';
import type { IncomingHttpHeaders } from 'node:http';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { APPOINTMENT_CSV_MAX_BYTES, MESSAGES } from '@portal/contracts';
import { RequestBodyRefused, formatBytes } from '@portal/platform';
import type { UploadSlots } from '../uploads/upload-slots.js';

/** What the gateway allows a request body, route by route, and one participant's share of uploads. */
export interface UploadLimits {
  /** The largest evidence file of any kind (EVIDENCE_*_MAX_BYTES). */
  evidenceMaxBytes: number;
  /** The largest verification photo or avatar (PHOTO_MAX_BYTES). */
  photoMaxBytes: number;
  /** A body from which no byte came for this long ends with 408 (ms). */
  idleTimeoutMs: number;
  /** Uploads one participant may have running at once (0: no limit). */
  concurrentPerParticipant: number;
}

/** What a multipart form adds around its file (fields, part headers, boundaries); multer's own limits keep it far below. */
const FORM_ALLOWANCE = 1024 * 1024;
/** Every other request: a JSON body, which the services and the gateway read up to 64 KB. */
const OTHER_BODY_MAX = 64 * 1024;
const UPLOADS_PATH = '/api/evidence/uploads';
/** The refusal of any other body, worded once (bodyRuleOf runs for every request). */
const OTHER_BODY_TOO_LARGE = `The request body is too large (at most ${formatBytes(OTHER_BODY_MAX)})`;

interface BodyRule {
  maxBytes: number;
  /** Said when a body is larger than maxBytes. */
  tooLarge: string;
  /** Whether the request is an upload that counts against its participant's share. */
  upload: boolean;
}

/** The body limit of a request: the file limit of an upload route plus its form, 64 KB for anything else. */
export function bodyRuleOf(method: string, url: string, limits: UploadLimits): BodyRule {
  const query = url.indexOf('?');
  const path = query === -1 ? url : url.slice(0, query);
  const evidence = () => `The file is too large (at most ${formatBytes(limits.evidenceMaxBytes)})`;
  if ((method === 'POST' && path === '/api/evidence') || (method === 'PUT' && path.startsWith('/api/evidence/update/'))) {
    return { maxBytes: limits.evidenceMaxBytes + FORM_ALLOWANCE, tooLarge: evidence(), upload: true };
  }
  if ((method === 'PATCH' || method === 'POST') && (path === UPLOADS_PATH || path.startsWith(`${UPLOADS_PATH}/`))) {
    return { maxBytes: limits.evidenceMaxBytes, tooLarge: evidence(), upload: method === 'PATCH' };
  }
  if (method === 'POST' && path === '/api/user/register') {
    return { maxBytes: limits.photoMaxBytes + FORM_ALLOWANCE, tooLarge: `The photo is too large (at most ${formatBytes(limits.photoMaxBytes)})`, upload: false };
  }
  if (method === 'POST' && path === '/api/appointments/import') {
    return { maxBytes: APPOINTMENT_CSV_MAX_BYTES + 64 * 1024, tooLarge: `The CSV file is too large (at most ${formatBytes(APPOINTMENT_CSV_MAX_BYTES)})`, upload: false };
  }
  if (method === 'PUT' && path === '/api/evidence/user') {
    return { maxBytes: limits.photoMaxBytes + FORM_ALLOWANCE, tooLarge: `The avatar is too large (at most ${formatBytes(limits.photoMaxBytes)})`, upload: true };
  }
  return { maxBytes: OTHER_BODY_MAX, tooLarge: OTHER_BODY_TOO_LARGE, upload: false };
}

function hasBody(headers: IncomingHttpHeaders): boolean {
  const length = headers['content-length'];
  return headers['transfer-encoding'] !== undefined || (length !== undefined && length !== '0');
}

function expectsContinue(headers: IncomingHttpHeaders): boolean {
  const expectation = headers.expect;
  return typeof expectation === 'string' && expectation.toLowerCase() === '100-continue';
}

/**
 * A request body on its way to a service: passed on unchanged, counted (a chunked body has no
 * declared length to refuse early), and watched for a client that stops sending. Time spent
 * waiting for the service to take the bytes (they are buffered here) is not the client's.
 */
class BodyWatch extends Transform {
  private received = 0;
  private lastByteAt = Date.now();
  private timer: NodeJS.Timeout | undefined;

  constructor(
    private readonly source: Readable,
    private readonly maxBytes: number,
    private readonly idleMs: number,
    private readonly onStall: () => void,
    private readonly onTooLarge: () => void,
  ) {
    // As much buffered as a socket read brings at once, so that a chunk passes in one step.
    super({ highWaterMark: 64 * 1024 });
    this.arm(idleMs);
  }

  override _transform(chunk: Buffer, _encoding: BufferEncoding, callback: TransformCallback): void {
    this.received += chunk.length;
    this.lastByteAt = Date.now();
    if (this.received > this.maxBytes) {
      this.stop();
      this.onTooLarge();
      return;
    }
    callback(null, chunk);
  }

  override _flush(callback: TransformCallback): void {
    this.stop();
    callback();
  }

  override _destroy(error: Error | null, callback: (error?: Error | null) => void): void {
    this.stop();
    callback(error);
  }

  stop(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
  }

  private arm(ms: number): void {
    this.timer = setTimeout(() => this.check(), ms);
    this.timer.unref();
  }

  private check(): void {
    this.timer = undefined;
    if (this.destroyed || this.writableEnded) return;
    // Bytes that arrived and wait for the service to take them: the slow side is ours.
    if (this.readableLength > 0 || this.writableLength > 0 || this.source.readableLength > 0) this.lastByteAt = Date.now();
    const quietFor = Date.now() - this.lastByteAt;
    if (quietFor < this.idleMs) {
      this.arm(this.idleMs - quietFor);
      return;
    }
    this.onStall();
  }
}

/**
 * The gateway's guard on request bodies, before any byte of one is read or passed on:
 *
 * - a declared Content-Length above the route's limit is refused with 413 at once;
 * - `Expect: 100-continue` is answered by the gateway itself, with 100 Continue only once every
 *   check has passed (so a refused upload is never sent), and never passed on to a service;
 * - a body from which nothing comes for `idleTimeoutMs` ends with 408, and the service's request
 *   is aborted (which removes a partial multipart file; a resumable upload keeps what came);
 * - a chunked body that grows past the limit ends with 413;
 * - a participant may have `concurrentPerParticipant` uploads running at once (429 beyond),
 *   counted in `slots` (Redis: across every gateway replica);
 * - any answer sent before the body was read closes the connection, rather than reading (and
 *   waiting for) a body nobody wants.
 */
export function guardRequestBodies(
  app: FastifyInstance,
  limits: UploadLimits,
  slots: UploadSlots,
): { countUploads: (request: FastifyRequest, reply: FastifyReply) => boolean | Promise<boolean> } {
  // Node answers 100 Continue on its own unless someone listens for the expectation: here the
  // request goes on to fastify, and the preParsing hook below answers it when the body is wanted.
  app.server.on('checkContinue', (req, res) => app.server.emit('request', req, res));

  app.addHook('onRequest', (request, reply, done) => {
    const declared = request.headers['content-length'];
    if (declared !== undefined) {
      const rule = bodyRuleOf(request.method, request.url, limits);
      if (Number(declared) > rule.maxBytes) {
        void reply.code(413).send({ code: 'payload_too_large', message: rule.tooLarge });
        return;
      }
    }
    done();
  });

  app.addHook('preParsing', (request, reply, payload, done) => {
    if (!hasBody(request.headers)) return done(null, payload);
    if (expectsContinue(request.headers)) reply.raw.writeContinue();
    const rule = bodyRuleOf(request.method, request.url, limits);
    const refuse = (status: number, body: { code: string; message: string }) => {
      payload.unpipe(watch);
      if (!reply.sent) void reply.code(status).send(body);
      // The service's request is aborted with it (undici sees its body fail). A service that
      // reads this body in the same process (handOver) answers the client with this refusal.
      watch.destroy(new RequestBodyRefused(status, body.code, body.message));
    };
    const watch = new BodyWatch(
      payload,
      rule.maxBytes,
      limits.idleTimeoutMs,
      () => {
        request.log.info({ idleMs: limits.idleTimeoutMs }, 'request body stalled');
        refuse(408, { code: 'request_timeout', message: MESSAGES.uploadStalled });
      },
      () => refuse(413, { code: 'payload_too_large', message: rule.tooLarge }),
    );
    payload.on('error', (error) => watch.destroy(error));
    payload.on('aborted', () => watch.destroy(new Error('the client went away')));
    // Whoever reads the body (the proxy, or evidence's upload handler in the same process) sees
    // its end through its own listeners; one that has stopped reading (it answered already) may
    // have none left, and an unheard stream error would end the whole process.
    watch.on('error', (error) => request.log.debug({ err: error }, 'request body ended early'));
    reply.raw.once('close', () => watch.stop());
    payload.pipe(watch);
    done(null, watch);
  });

  // An answer before the body was read (refused, unauthenticated, a service that answered early).
  app.addHook('onSend', (request, reply, payload, done) => {
    if (!request.raw.complete && hasBody(request.headers)) void reply.header('connection', 'close');
    done(null, payload);
  });

  const refuse = (reply: FastifyReply) => {
    const n = limits.concurrentPerParticipant;
    void reply.code(429).send({
      code: 'rate_limited',
      message: `You already have ${n} upload${n === 1 ? '' : 's'} at once. Wait until one has finished, then try again.`,
    });
  };
  return {
    /**
     * Counts an upload against its participant's share until its answer has gone; false (and a
     * 429 sent) when the share is used up, or (a 503 sent) when the shared count cannot be read.
     * Anything that is no upload is answered at once (true).
     */
    countUploads(request, reply) {
      const userId = request.caller?.identity.userId;
      if (!userId || limits.concurrentPerParticipant === 0 || !bodyRuleOf(request.method, request.url, limits).upload) return true;
      return slots.take(userId, limits.concurrentPerParticipant).then(
        (release) => {
          if (release === null) {
            refuse(reply);
            return false;
          }
          if (reply.raw.destroyed || reply.raw.writableFinished) release();
          else reply.raw.once('close', release);
          return true;
        },
        (error: unknown) => {
          // The shared count (Redis) did not answer: no upload beyond the share, so none at all.
          request.log.warn({ err: error }, 'upload share not counted');
          void reply.status(503).send({ code: 'internal', message: 'Uploads are not available right now. Please try again shortly.' });
          return false;
        },
      );
    },
  };
}
