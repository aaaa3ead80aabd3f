import { Router, type Request } from 'express';
import { z } from 'zod';
import {
  MESSAGES,
  IDEMPOTENCY_KEY_HEADER,
  adminEvidenceListQuerySchema,
  createEvidenceSchema,
  editFacesRequestSchema,
  evidenceListQuerySchema,
  facesConsentRequestSchema,
  idempotencyKeyField,
  isAdminRole,
  markReviewedRequestSchema,
  selectedVisibilityRequestSchema,
  updateEvidenceSchema,
  type MarkReviewed,
  type SelectedVisibility,
} from '@portal/contracts';
import { notFound, parseInput, requireAdmin, requireCaller, route, setNextLink, signedInOnly, uuidParam } from '@portal/platform';
import type { EvidenceService } from '../../domain/evidence-service.js';
import { isPubliclyShown, toEvidenceResponse } from '../../domain/evidence-record.js';
import type { EvidencePage } from '../../repositories/evidence-repository.js';
import { evidenceFileUpload, routeWithFile } from '../file-upload.js';

export interface EvidenceRouteDeps {
  evidence: EvidenceService;
  tmpDir: string;
  /** Decimals of a device position in public answers (the owner and administrators see it whole). */
  publicLocationDecimals: number;
}

const evidenceId = (req: Request) => uuidParam(req.params.id, MESSAGES.evidenceNotFound);

function sendPage(
  req: Request,
  res: Parameters<Parameters<typeof route>[0]>[1],
  limit: number,
  page: EvidencePage,
  cache: string,
  publicLocationDecimals?: number,
): void {
  setNextLink(req, res, limit, page.nextCursor);
  res.set('Cache-Control', cache);
  res.json(page.items.map((record) => toEvidenceResponse(record, publicLocationDecimals)));
}

/** The Idempotency-Key header, checked; undefined when not sent. */
function idempotencyKeyOf(req: Request): string | undefined {
  const value = req.get(IDEMPOTENCY_KEY_HEADER);
  if (value === undefined) return undefined;
  return parseInput(z.object({ key: idempotencyKeyField }), { key: value }).key;
}

const ids = (records: { id: string }[]) => records.map((record) => record.id);

/** The evidence routes of SPEC section 7; every role and ownership rule is enforced here. */
export function evidenceRoutes({ evidence, tmpDir, publicLocationDecimals }: EvidenceRouteDeps): Router {
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
        const record = await evidence.createFromFile(caller, { path: req.file.path }, input, {
          ...(idempotencyKey ? { idempotencyKey } : {}),
        });
        res.status(201).json(toEvidenceResponse(record));
        return;
      }
      const { record, created } = await evidence.createNote(caller, input, idempotencyKey);
      res.status(created ? 201 : 200).json(toEvidenceResponse(record));
    }),
  );

  router.get(
    '/api/evidence',
    route(async (req, res) => {
      const caller = requireCaller(req);
      const { type, q, limit, cursor } = parseInput(evidenceListQuerySchema, req.query);
      sendPage(req, res, limit, await evidence.listOwn(caller, { type, q }, limit, cursor), 'private, no-store');
    }),
  );

  router.get(
    '/api/evidence/public',
    route(async (req, res) => {
      const { type, q, limit, cursor } = parseInput(evidenceListQuerySchema, req.query);
      sendPage(req, res, limit, await evidence.listPublic({ type, q }, limit, cursor), 'public, max-age=30', publicLocationDecimals);
    }),
  );

  router.get(
    '/api/evidence/admin',
    route(async (req, res) => {
      requireAdmin(req);
      const { type, q, review_status, visibility, limit, cursor } = parseInput(adminEvidenceListQuerySchema, req.query);
      const isPublic = visibility === undefined ? undefined : visibility === 'public';
      sendPage(
        req,
        res,
        limit,
        await evidence.listAll({ type, q, reviewStatus: review_status, isPublic }, limit, cursor),
        'private, no-store',
      );
    }),
  );

  router.get(
    '/api/evidence/admin/counts',
    route(async (req, res) => {
      requireAdmin(req);
      res.set('Cache-Control', 'private, no-store');
      res.json(await evidence.counts());
    }),
  );

  router.get(
    '/api/user/:id/evidence',
    route(async (req, res) => {
      requireAdmin(req);
      const ownerId = uuidParam(req.params.id, MESSAGES.userNotFound);
      const { type, q, limit, cursor } = parseInput(evidenceListQuerySchema, req.query);
      sendPage(req, res, limit, await evidence.listAll({ ownerId, type, q }, limit, cursor), 'private, no-store');
    }),
  );

  router.get(
    '/api/evidence/item/:id',
    route(async (req, res) => {
      const record = await evidence.readable(req.caller, evidenceId(req));
      const open = isPubliclyShown(record);
      const privileged = req.caller !== undefined && (req.caller.userId === record.user_id || isAdminRole(req.caller.role));
      if (open && !privileged) {
        // The public's copy: a device position is coarsened. The owner and administrators get
        // another answer at this URL, so it varies with the caller: the gateway's shared cache
        // (which stores no answer with Vary) must not hand this copy to them.
        res.set('Cache-Control', 'public, max-age=30');
        res.set('Vary', 'Cookie');
        res.json(toEvidenceResponse(record, publicLocationDecimals));
      } else {
        // The owner's and administrators' copy holds the exact position: never shared.
        res.set('Cache-Control', 'private, no-store');
        res.json(toEvidenceResponse(record));
      }
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
      res.json(toEvidenceResponse(await evidence.update(caller, id, input, file)));
    }),
  );

  router.delete(
    '/api/evidence/delete/:id',
    route(async (req, res) => {
      await evidence.delete(requireCaller(req), evidenceId(req));
      res.json({ ok: true, message: MESSAGES.evidenceDeleted });
    }),
  );

  router.put(
    '/api/evidence/clearance/:id',
    route(async (req, res) => {
      const caller = requireAdmin(req);
      res.json(toEvidenceResponse(await evidence.toggleVisibility(caller, evidenceId(req))));
    }),
  );

  router.put(
    '/api/evidence/visibility',
    route(async (req, res) => {
      const caller = requireAdmin(req);
      const input = parseInput(selectedVisibilityRequestSchema, req.body);
      const result = await evidence.setSelectedVisibility(caller, input.ids, input.is_public);
      const body: SelectedVisibility = {
        ok: true,
        is_public: input.is_public,
        changed: ids(result.changed),
        unchanged: result.unchanged,
        not_found: result.missing,
      };
      res.json(body);
    }),
  );

  router.put(
    '/api/evidence/review',
    route(async (req, res) => {
      const caller = requireAdmin(req);
      const input = parseInput(markReviewedRequestSchema, req.body);
      const result = await evidence.markReviewed(caller, input.ids);
      const body: MarkReviewed = { ok: true, reviewed: ids(result.changed), unchanged: result.unchanged, not_found: result.missing };
      res.json(body);
    }),
  );

  router.put(
    '/api/evidence/review/:id',
    route(async (req, res) => {
      const caller = requireAdmin(req);
      const id = evidenceId(req);
      const result = await evidence.markReviewed(caller, [id]);
      if (result.missing.length > 0) throw notFound(MESSAGES.evidenceNotFound);
      res.json(toEvidenceResponse(await evidence.readable(req.caller, id)));
    }),
  );

  // Faces: administrators decide on the original (docs/decisions/0044).
  router.get(
    '/api/evidence/:id/faces',
    route(async (req, res) => {
      requireAdmin(req);
      res.set('Cache-Control', 'private, no-store');
      res.json(await evidence.facesOf(evidenceId(req)));
    }),
  );

  router.put(
    '/api/evidence/:id/faces',
    route(async (req, res) => {
      const caller = requireAdmin(req);
      const id = evidenceId(req);
      const input = parseInput(editFacesRequestSchema, req.body);
      res.set('Cache-Control', 'private, no-store');
      res.json(await evidence.editFaces(caller, id, input));
    }),
  );

  router.put(
    '/api/evidence/:id/faces/consent',
    route(async (req, res) => {
      const caller = requireAdmin(req);
      const id = evidenceId(req);
      const input = parseInput(facesConsentRequestSchema, req.body);
      res.set('Cache-Control', 'private, no-store');
      res.json(await evidence.setFacesConsent(caller, id, input.consent, input.note));
    }),
  );

  for (const [path, isPublic] of [
    ['/api/evidence/makeAllPublic', true],
    ['/api/evidence/makeAllSecret', false],
  ] as const) {
    router.put(
      path,
      route(async (req, res) => {
        const caller = requireAdmin(req);
        const changed = await evidence.setAllVisibility(caller, isPublic);
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
