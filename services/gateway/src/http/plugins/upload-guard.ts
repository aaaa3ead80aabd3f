import fp from 'fastify-plugin';
import type { IncomingHttpHeaders } from 'node:http';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { APPOINTMENT_CSV_MAX_BYTES, MESSAGES } from '@portal/contracts';
import { RequestBodyRefused, formatBytes } from '@portal/platform';
import type { UploadSlots } from '../../uploads/upload-slots.js';
import { countsAsUpload, pathOf, ruleOf, type RequestRule } from '../../routes/route-table.js';
import { BodyWatch } from '../body-watch.js';

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
/** The refusal of any other body, worded once (bodyRuleOf runs for every request). */
const OTHER_BODY_TOO_LARGE = `The request body is too large (at most ${formatBytes(OTHER_BODY_MAX)})`;

interface BodyRule {
  maxBytes: number;
  /** Said when a body is larger than maxBytes. */
  tooLarge: string;
  /** The request's rule in the route table (routes/route-table.ts). */
  rule: RequestRule;
}

/** The body limit of a request, by the kind of body its route table rule names. */
export function bodyRuleOf(method: string, url: string, limits: UploadLimits): BodyRule {
  const rule = ruleOf(method, pathOf(url));
  const evidence = () => `The file is too large (at most ${formatBytes(limits.evidenceMaxBytes)})`;
  switch (rule.body) {
    case 'evidence-file':
      return { maxBytes: limits.evidenceMaxBytes + FORM_ALLOWANCE, tooLarge: evidence(), rule };
    case 'upload-stream':
      return { maxBytes: limits.evidenceMaxBytes, tooLarge: evidence(), rule };
    case 'photo': {
      const what = method === 'POST' ? 'photo' : 'avatar';
      return {
        maxBytes: limits.photoMaxBytes + FORM_ALLOWANCE,
        tooLarge: `The ${what} is too large (at most ${formatBytes(limits.photoMaxBytes)})`,
        rule,
      };
    }
    case 'csv':
      return {
        maxBytes: APPOINTMENT_CSV_MAX_BYTES + OTHER_BODY_MAX,
        tooLarge: `The CSV file is too large (at most ${formatBytes(APPOINTMENT_CSV_MAX_BYTES)})`,
        rule,
      };
    default:
      return { maxBytes: OTHER_BODY_MAX, tooLarge: OTHER_BODY_TOO_LARGE, rule };
  }
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
export const bodyGuard = fp<{ limits: UploadLimits }>(
  async (app, { limits }) => {
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
  },
  { name: 'body-guard' },
);

/**
 * One participant's share of the upload capacity: a request the route table counts as an upload
 * (routes/route-table.ts: every multipart evidence or avatar, every tus PATCH, and a tus creation
 * POST that carries its first bytes) takes one of `concurrentPerParticipant` slots until its
 * answer has gone; beyond, 429. Registered after the sessions plugin, whose caller it counts.
 */
export const uploadShare = fp<{ limits: UploadLimits; slots: UploadSlots }>(
  async (api, { limits, slots }) => {
    const refuse = (reply: FastifyReply) => {
      const n = limits.concurrentPerParticipant;
      void reply.code(429).send({
        code: 'rate_limited',
        message: `You already have ${n} upload${n === 1 ? '' : 's'} at once. Wait until one has finished, then try again.`,
      });
    };
    /**
     * Counts an upload against its participant's share until its answer has gone; false (and a
     * 429 sent) when the share is used up, or (a 503 sent) when the shared count cannot be read.
     * Anything that is no upload is answered at once (true).
     */
    const countUploads = (request: FastifyRequest, reply: FastifyReply): boolean | Promise<boolean> => {
      const userId = request.caller?.identity.userId;
      if (
        !userId ||
        limits.concurrentPerParticipant === 0 ||
        !countsAsUpload(ruleOf(request.method, pathOf(request.url)), hasBody(request.headers))
      )
        return true;
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
    };
    api.addHook('onRequest', (request, reply, done) => {
      const counted = countUploads(request, reply);
      if (counted === true) done();
      else if (counted !== false) void counted.then((taken) => taken && done());
    });
  },
  { name: 'upload-share', dependencies: ['sessions'] },
);
