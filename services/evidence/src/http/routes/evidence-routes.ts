import { Router, type Request } from 'express';
import { z } from 'zod';
import {
  MESSAGES,
  IDEMPOTENCY_KEY_HEADER,
  createEvidenceSchema,
  evidenceListQuerySchema,
  idempotencyKeyField,
  updateEvidenceSchema,
} from '@portal/contracts';
import {
  notFound,
  parseInput,
  requestId,
  requireAdmin,
  requireCaller,
  route,
  setNextLink,
  signedInOnly,
  uuidParam,
} from '@portal/platform';
import type { EvidenceService } from '../../domain/evidence-service.js';
import { toEvidenceResponse } from '../../domain/evidence-record.js';
import type { EvidencePage } from '../../repositories/evidence-repository.js';
import { evidenceFileUpload, routeWithFile } from '../file-upload.js';

export interface EvidenceRouteDeps {
  evidence: EvidenceService;
  tmpDir: string;
}

const evidenceId = (req: Request) => uuidParam(req.params.id, MESSAGES.evidenceNotFound);

function sendPage(req: Request, res: Parameters<Parameters<typeof route>[0]>[1], limit: number, page: EvidencePage, cache: string): void {
  setNextLink(req, res, limit, page.nextCursor);
  res.set('Cache-Control', cache);
  res.json(page.items.map(toEvidenceResponse));
}

/** The Idempotency-Key header, checked; undefined when not sent. */
function idempotencyKeyOf(req: Request): string | undefined {
  const value = req.get(IDEMPOTENCY_KEY_HEADER);
  if (value === undefined) return undefined;
  return parseInput(z.object({ key: idempotencyKeyField }), { key: value }).key;
}

/** The evidence routes of SPEC section 7; every role and ownership rule is enforced here. */
export function evidenceRoutes({ evidence, tmpDir }: EvidenceRouteDeps): Router {
  const router = Router();
  const upload = evidenceFileUpload(tmpDir, evidence.largestUpload);

  router.post(
    '/api/evidence',
    signedInOnly(),
    // Before a byte of the file is taken: the onboarding gate and the key's shape.
    (req, _res, next) => {
      try {
        evidence.assertMayAddEvidence(requireCaller(req));
        idempotencyKeyOf(req);
        next();
      } catch (error) {
        next(error);
      }
    },
    upload,
    routeWithFile(async (req, res) => {
      const caller = requireCaller(req);
      const input = parseInput(createEvidenceSchema, req.body);
      const idempotencyKey = idempotencyKeyOf(req);
      if (req.file) {
        const record = await evidence.createFromFile(caller, { path: req.file.path }, input, { requestId: requestId(req), ...(idempotencyKey ? { idempotencyKey } : {}) });
        res.status(201).json(toEvidenceResponse(record));
        return;
      }
      const { record, created } = await evidence.createNote(caller, input, requestId(req), idempotencyKey);
      res.status(created ? 201 : 200).json(toEvidenceResponse(record));
    }),
  );

  router.get(
    '/api/evidence',
    route(async (req, res) => {
      const caller = requireCaller(req);
      const { type, limit, cursor } = parseInput(evidenceListQuerySchema, req.query);
      sendPage(req, res, limit, await evidence.listOwn(caller, type, limit, cursor), 'private, no-store');
    }),
  );

  router.get(
    '/api/evidence/public',
    route(async (req, res) => {
      const { type, limit, cursor } = parseInput(evidenceListQuerySchema, req.query);
      sendPage(req, res, limit, await evidence.listPublic(type, limit, cursor), 'public, max-age=30');
    }),
  );

  router.get(
    '/api/evidence/admin',
    route(async (req, res) => {
      requireAdmin(req);
      const { type, limit, cursor } = parseInput(evidenceListQuerySchema, req.query);
      sendPage(req, res, limit, await evidence.listAll({ type }, limit, cursor), 'private, no-store');
    }),
  );

  router.get(
    '/api/user/:id/evidence',
    route(async (req, res) => {
      requireAdmin(req);
      const ownerId = uuidParam(req.params.id, MESSAGES.userNotFound);
      const { type, limit, cursor } = parseInput(evidenceListQuerySchema, req.query);
      sendPage(req, res, limit, await evidence.listAll({ ownerId, type }, limit, cursor), 'private, no-store');
    }),
  );

  router.get(
    '/api/evidence/item/:id',
    route(async (req, res) => {
      const record = await evidence.readable(req.caller, evidenceId(req));
      const open = record.is_public && (record.media_status === 'ready' || record.media_status === 'none');
      res.set('Cache-Control', open ? 'public, max-age=30' : 'private, no-store');
      res.json(toEvidenceResponse(record));
    }),
  );

  router.put(
    '/api/evidence/update/:id',
    signedInOnly(),
    upload,
    routeWithFile(async (req, res) => {
      const caller = requireCaller(req);
      const id = evidenceId(req);
      const input = parseInput(updateEvidenceSchema, req.body);
      const file = req.file ? { path: req.file.path } : undefined;
      res.json(toEvidenceResponse(await evidence.update(caller, id, input, file, requestId(req))));
    }),
  );

  router.delete(
    '/api/evidence/delete/:id',
    route(async (req, res) => {
      await evidence.delete(requireCaller(req), evidenceId(req), requestId(req));
      res.json({ ok: true, message: MESSAGES.evidenceDeleted });
    }),
  );

  router.put(
    '/api/evidence/clearance/:id',
    route(async (req, res) => {
      requireAdmin(req);
      res.json(toEvidenceResponse(await evidence.toggleVisibility(evidenceId(req), requestId(req))));
    }),
  );

  for (const [path, isPublic] of [
    ['/api/evidence/makeAllPublic', true],
    ['/api/evidence/makeAllSecret', false],
  ] as const) {
    router.put(
      path,
      route(async (req, res) => {
        requireAdmin(req);
        const changed = await evidence.setAllVisibility(isPublic, requestId(req));
        res.json({ ok: true, changed, is_public: isPublic });
      }),
    );
  }

  router.all(
    '/api/evidence/{*rest}',
    route(async () => {
      throw notFound();
    }),
  );
  return router;
}
