/* eslint-disable @typescript-eslint/only-throw-error -- @tus/server's hooks answer an error thrown
   as its own { status_code, body } object (ERRORS, tusError), not an Error instance. */
import { rm } from 'node:fs/promises';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { Router } from 'express';
import { ERRORS, Server, TUS_RESUMABLE, TUS_VERSION, type CancellationContext, type Upload } from '@tus/server';
import { MESSAGES, createEvidenceSchema, idempotencyKeyField, isAdminRole } from '@portal/contracts';
import {
  IDENTITY_HEADER,
  formatBytes,
  runInHttpRequestContext,
  toHttpError,
  type CallerIdentity,
  type IdentityTokens,
  type Logger,
} from '@portal/platform';
import type { EvidenceService } from '../../domain/evidence-service.js';
import { toEvidenceResponse } from '../../domain/evidence-record.js';
import type { EvidenceRepository } from '../../repositories/evidence-repository.js';
import { streamPatchBodiesFromNode, tusError } from '../tus-node-bodies.js';
import { uploadIdFor, type LocalCopy, type UploadStorage } from '../../repositories/upload-storage.js';
import { ScratchFull } from '../../repositories/scratch-budget.js';
import { UnfinishedUploadQuota } from '../../domain/unfinished-upload-quota.js';
import { AdmissionTurnUnavailable, type AdmissionLedger } from '../../repositories/upload-admissions.js';

export const UPLOADS_PATH = '/api/evidence/uploads';

export interface UploadRouteDeps {
  evidence: EvidenceService;
  repository: EvidenceRepository;
  tokens: IdentityTokens;
  logger: Logger;
  /** Where unfinished resumable uploads are kept (files, or S3). */
  storage: UploadStorage;
  /** The bytes one participant's unfinished uploads may declare together. */
  unfinishedBytesPerParticipant: number;
  /** Where that share's checks meet (every replica's, in Redis); this process's own when absent. */
  admissions?: AdmissionLedger;
}

const JSON_TYPE = 'application/json; charset=utf-8';

/**
 * @tus/server writes every answer through write(). Its errors carry the portal's JSON bodies (the
 * hooks and onResponseError below make them), except two it writes before any hook runs: a missing
 * Tus-Resumable header (412) and malformed tus headers (400), which say so in plain text. Here
 * those become JSON errors too, and every JSON error says it is JSON.
 */
class JsonErrorsTusServer extends Server {
  override write(context: CancellationContext, headers: Headers, status: number, body = '') {
    if (status >= 400 && !body.startsWith('{')) {
      const text = body.trim();
      const message =
        status === 412
          ? `Resumable uploads need the header Tus-Resumable: ${TUS_RESUMABLE}`
          : text.startsWith('Invalid ')
            ? `This resumable upload request has an invalid header: ${text.slice('Invalid '.length).split(' ').join(', ')}`
            : text || 'The resumable upload request was refused';
      body = JSON.stringify({ code: status === 404 ? 'not_found' : 'validation_failed', message });
    }
    if (status === 412) headers.set('Tus-Version', TUS_VERSION.join(','));
    if (status >= 400) headers.set('Content-Type', JSON_TYPE);
    return super.write(context, headers, status, body);
  }
}

/** How many upload owners are remembered (a few hundred bytes each). */
const OWNERS_REMEMBERED = 10_000;

/**
 * Who owns which upload, remembered from the upload's stored info (an upload's owner never
 * changes): the owner check of every PATCH and HEAD, without reading the upload's info once more
 * just before tus reads it again under its lock. The oldest are forgotten first; a forgotten or
 * unknown upload is read from the store as before.
 */
class UploadOwners {
  private readonly owners = new Map<string, string>();

  get(uploadId: string): string | undefined {
    return this.owners.get(uploadId);
  }

  set(uploadId: string, owner: string): void {
    this.owners.delete(uploadId);
    this.owners.set(uploadId, owner);
    if (this.owners.size > OWNERS_REMEMBERED) this.owners.delete(this.owners.keys().next().value!);
  }

  delete(uploadId: string): void {
    this.owners.delete(uploadId);
  }
}

/**
 * Resumable uploads (the tus protocol, so that a video from a phone survives a dropped mobile
 * connection). An upload belongs to the participant who created it; when its last byte arrives it
 * becomes an evidence item, and the final response carries that item as JSON.
 */
export function uploadRoutes(deps: UploadRouteDeps): {
  router: Router;
  cleanUp: () => Promise<number>;
  handleInProcess: (req: IncomingMessage, res: ServerResponse) => void;
} {
  const datastore = deps.storage.datastore;
  const owners = new UploadOwners();
  const unfinished = new UnfinishedUploadQuota(
    deps.storage,
    deps.unfinishedBytesPerParticipant,
    deps.evidence.largestUpload,
    deps.admissions,
    Date.now,
    deps.logger,
  );
  const callers = new WeakMap<Request, CallerIdentity>();

  async function callerOf(req: Request): Promise<CallerIdentity> {
    const known = callers.get(req);
    if (known) return known;
    const token = req.headers.get(IDENTITY_HEADER);
    if (!token) throw tusError(401, 'unauthenticated', MESSAGES.notSignedIn);
    try {
      const caller = await deps.tokens.verifyCaller(token);
      callers.set(req, caller);
      return caller;
    } catch {
      throw tusError(401, 'unauthenticated', MESSAGES.notSignedIn);
    }
  }

  /** Uploads being filed as items right now (so that a HEAD meanwhile does not file one twice). */
  const filing = new Set<string>();

  /**
   * Files a complete upload as an item; whatever the outcome, the upload itself is removed, except
   * when it cannot be read back now (ScratchFull): then it stays, whole, for its client's next try.
   */
  async function fileUpload(caller: CallerIdentity, upload: Upload) {
    filing.add(upload.id);
    let copy: LocalCopy | undefined;
    let keep = false;
    try {
      copy = await deps.storage.localCopy(upload);
      const idempotencyKey = idempotencyKeyOf(upload);
      return await deps.evidence.createFromFile(caller, { path: copy.path }, metadataInput(upload), {
        uploadId: upload.id,
        ...(idempotencyKey ? { idempotencyKey } : {}),
      });
    } catch (error) {
      keep = error instanceof ScratchFull;
      throw error;
    } finally {
      if (copy) {
        // The service removes the file it was given; not when the metadata was refused before.
        await rm(copy.path, { force: true }).catch(() => undefined);
        copy.release();
      }
      if (!keep) {
        owners.delete(upload.id);
        await deps.storage
          .discard(upload)
          .catch((error: unknown) => deps.logger.warn({ err: error, uploadId: upload.id }, 'removing a finished upload failed'));
      }
      filing.delete(upload.id);
    }
  }

  /** The answer to a finished upload this process has no scratch room to read back now: ask again shortly. */
  function scratchFullAnswer(error: ScratchFull) {
    deps.logger.info(
      { retryAfterSeconds: error.retryAfterSeconds },
      'finishing an upload deferred: the scratch space is taken by others being finished',
    );
    return {
      status_code: 503,
      headers: { 'Content-Type': JSON_TYPE, 'Retry-After': String(error.retryAfterSeconds) },
      body: JSON.stringify({ code: 'service_unavailable', message: error.message }),
    };
  }

  /**
   * An upload whose last byte was stored but which the process did not live to file as an item
   * (it died in between): with nothing left to send, its client could never finish it. It is
   * filed when its owner asks about it.
   */
  async function fileIfComplete(caller: CallerIdentity | undefined, uploadId: string) {
    if (!caller || filing.has(uploadId)) return null;
    const upload = await datastore.getUpload(uploadId).catch(() => null);
    if (!upload || upload.size === undefined || upload.offset !== upload.size || upload.metadata?.owner !== caller.userId) return null;
    return { record: await fileUpload(caller, upload), size: upload.size };
  }

  /** The idempotencyKey of an upload's metadata, checked; undefined when none was sent. */
  function idempotencyKeyOf(upload: Upload): string | undefined {
    const value = upload.metadata?.idempotencyKey;
    if (value === undefined || value === null || value === '') return undefined;
    const parsed = idempotencyKeyField.safeParse(value);
    if (!parsed.success) throw tusError(400, 'validation_failed', parsed.error.issues[0]?.message ?? 'Invalid idempotency key');
    return parsed.data;
  }

  function metadataInput(upload: Upload) {
    const parsed = createEvidenceSchema.safeParse({
      title: upload.metadata?.title ?? undefined,
      notes: upload.metadata?.notes ?? '',
      location: upload.metadata?.location ?? undefined,
    });
    if (!parsed.success) throw tusError(400, 'validation_failed', parsed.error.issues[0]?.message ?? 'Invalid upload');
    return parsed.data;
  }

  const tus = new JsonErrorsTusServer({
    path: UPLOADS_PATH,
    datastore,
    relativeLocation: true,
    maxSize: deps.evidence.largestUpload,
    disableTerminationForFinishedUploads: true,
    async onIncomingRequest(req, uploadId) {
      const caller = await callerOf(req);
      if (req.method === 'POST' || req.method === 'OPTIONS' || !uploadId) return;
      let owner = owners.get(uploadId);
      if (owner === undefined) {
        try {
          owner = (await datastore.getUpload(uploadId)).metadata?.owner ?? undefined;
        } catch {
          return; // unknown upload: tus answers 404
        }
        if (owner) owners.set(uploadId, owner);
      }
      if (owner !== caller.userId) throw tusError(403, 'forbidden', MESSAGES.uploadNotYours);
      // Its owner asks about it: its creation is over; the store's count applies from now on.
      void unfinished.created(uploadId);
    },
    namingFunction: async (req) => uploadIdFor((await callerOf(req)).userId),
    async onUploadCreate(req, upload) {
      const caller = await callerOf(req);
      if (!isAdminRole(caller.role) && caller.videoWatched !== true) throw tusError(403, 'forbidden', MESSAGES.watchVideoFirst);
      metadataInput(upload);
      idempotencyKeyOf(upload);
      // Unfinished uploads hold disk (or S3) space for a day: one participant holds at most a share.
      const quota = deps.unfinishedBytesPerParticipant;
      let answer;
      try {
        answer = await unfinished.admit(caller.userId, upload.id, upload.size);
      } catch (error) {
        if (!(error instanceof AdmissionTurnUnavailable)) throw error;
        // The share cannot be checked (Redis away): no upload beyond it, so none for now.
        deps.logger.warn({ err: error }, 'unfinished-uploads share not checked');
        throw tusError(503, 'internal', 'Uploads are not available right now. Please try again shortly.');
      }
      if (!answer.admitted) {
        const reserved = answer.reserved;
        throw tusError(
          413,
          'payload_too_large',
          `Your unfinished uploads already hold ${formatBytes(reserved)} of the ${formatBytes(quota)} one person may have waiting. Finish or cancel one of them, then start this one again.`,
        );
      }
      // The owner is set here, whatever the client put in the metadata.
      owners.set(upload.id, caller.userId);
      return { metadata: { ...upload.metadata, owner: caller.userId } };
    },
    async onUploadFinish(req, upload) {
      const caller = await callerOf(req);
      try {
        const record = await fileUpload(caller, upload);
        return {
          status_code: 200,
          headers: { 'Content-Type': 'application/json', 'X-Evidence-Id': record.id },
          body: JSON.stringify(toEvidenceResponse(record)),
        };
      } catch (error) {
        // Answered, not thrown: a thrown answer carries no headers (Retry-After). The bytes are all
        // stored (the client's HEAD shows the upload complete, and files it when there is room).
        if (error instanceof ScratchFull) return scratchFullAnswer(error);
        const httpError = toHttpError(error);
        if (httpError.status >= 500) deps.logger.error({ err: error, uploadId: upload.id }, 'finishing an upload failed');
        throw { status_code: httpError.status, body: JSON.stringify(httpError.toJSON()) };
      }
    },
    async onResponseError(_req, error) {
      if ('status_code' in error && typeof error.body === 'string' && error.body.startsWith('{')) return error;
      const status = 'status_code' in error ? error.status_code : 500;
      if (status === 413) {
        return tusError(413, 'payload_too_large', `The file is too large (at most ${formatBytes(deps.evidence.largestUpload)})`);
      }
      if (status === 404 || status === 410) return tusError(status, 'not_found', MESSAGES.uploadNotFound);
      // tus answers 403 for a PATCH without Upload-Offset or the tus Content-Type: bad input, so a 400 here.
      if (error === ERRORS.MISSING_OFFSET || error === ERRORS.INVALID_CONTENT_TYPE) {
        return tusError(
          400,
          'validation_failed',
          `A PATCH of a resumable upload needs the headers Upload-Offset and Content-Type: application/offset+octet-stream`,
        );
      }
      if (status >= 500) deps.logger.error({ err: error }, 'resumable upload failed');
      const body = 'body' in error && typeof error.body === 'string' ? error.body.trim() : (error as Error).message;
      return tusError(status, status >= 500 ? 'internal' : 'validation_failed', status >= 500 ? MESSAGES.internal : body);
    },
  });

  streamPatchBodiesFromNode(tus, (upload) => deps.storage.flushInBackground?.(upload));

  const router = Router();
  // A finished upload is answered from the item it became, so that a client that lost the last
  // response and asks again learns it is complete instead of starting over (no duplicate items).
  router.head(`${UPLOADS_PATH}/:uploadId`, (req, res, next) => {
    deps.repository
      .findFinishedUpload(String(req.params.uploadId))
      .then(async (known) => {
        const finished =
          known ??
          (await fileIfComplete(req.caller, String(req.params.uploadId)).then(
            (filed) => filed && { evidenceId: filed.record.id, size: filed.size },
          ));
        if (!finished) return next();
        const record = await deps.repository.findById(finished.evidenceId);
        if (!record || record.user_id !== req.caller?.userId) return next();
        res.set({
          'Tus-Resumable': '1.0.0',
          'Upload-Offset': String(finished.size),
          'Upload-Length': String(finished.size),
          'Cache-Control': 'no-store',
          'X-Evidence-Id': record.id,
        });
        res.status(200).end();
      })
      .catch((error: unknown) => {
        if (!(error instanceof ScratchFull)) return next(error);
        const answer = scratchFullAnswer(error);
        res
          .set({ ...answer.headers, 'Tus-Resumable': '1.0.0', 'Cache-Control': 'no-store' })
          .status(503)
          .end();
      });
  });
  // Exactly the methods tus answers (POST, HEAD, PATCH, DELETE, OPTIONS, GET); any other method
  // falls through to the JSON 404 of the evidence routes.
  for (const method of Object.keys(tus.handlers)) {
    router[method.toLowerCase() as 'get' | 'head' | 'options' | 'patch' | 'post' | 'delete'](
      [UPLOADS_PATH, `${UPLOADS_PATH}/{*rest}`],
      (req, res) => {
        void tus.handle(req, res);
      },
    );
  }
  const cleanUp = async () => (await tus.cleanUpExpiredUploads()) + (await deps.storage.sweepOrphans());
  /**
   * A resumable-upload request handed over by the gateway in this same process (all-in-one), with
   * the headers the gateway would have sent (its signed identity header among them) and its body
   * stream (requestBodyOf): tus answers on the client's own response, without express around it
   * (the gateway logs and counts the request). It runs in the request's context, as the express
   * app's requests do (requestContext()): the gateway's, for the same request.
   */
  const handleInProcess = (req: IncomingMessage, res: ServerResponse) => {
    runInHttpRequestContext(req, () => tus.handle(req, res)).catch((error: unknown) => {
      deps.logger.error({ err: error }, 'resumable upload failed');
      if (res.headersSent) {
        res.destroy();
        return;
      }
      res
        .writeHead(500, { 'Content-Type': JSON_TYPE, Connection: 'close' })
        .end(JSON.stringify({ code: 'internal', message: MESSAGES.internal }));
    });
  };
  return { router, cleanUp, handleInProcess };
}
