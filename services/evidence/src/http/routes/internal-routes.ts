import { Router } from 'express';
import { MESSAGES, type PostedCounts } from '@portal/contracts';
import { badRequest, notFound, requireServiceToken, route, uuidParam, type BlobStore, type IdentityTokens } from '@portal/platform';
import { mediaKeyOf, type StoredVariant } from '../../domain/evidence-record.js';
import type { EvidenceRepository } from '../../repositories/evidence-repository.js';
import { exportedFiles, type ExportedItem } from '../../domain/evidence-export.js';

const VARIANTS = new Set<StoredVariant>(['display', 'thumb', 'poster', 'original']);
const PAGE = 100;

/**
 * Routes for the other services only (a service token is required; the gateway never proxies
 * /internal): what identity needs to export everything held on one participant.
 */
export function internalRoutes(deps: { tokens: IdentityTokens; repository: EvidenceRepository; blobs: BlobStore }): Router {
  const router = Router();
  router.use('/internal', requireServiceToken(deps.tokens));

  /** Every item of one participant, every stored field, and the files each has (oldest first). */
  router.get(
    '/internal/users/:userId/evidence',
    route(async (req, res) => {
      const userId = uuidParam(req.params.userId, MESSAGES.userNotFound);
      const items: ExportedItem[] = [];
      let cursor: string | undefined;
      do {
        const page = await deps.repository.list({ ownerId: userId }, PAGE, cursor);
        for (const record of page.items) items.push({ record, files: await exportedFiles(record, deps.blobs) });
        cursor = page.nextCursor ?? undefined;
      } while (cursor);
      res.set('Cache-Control', 'no-store');
      res.json({ items: items.reverse() });
    }),
  );

  /**
   * How many items of each kind came into the review queue after `since` (for the moderator
   * digest): items still waiting for review (review_status new) that were posted, or sent back
   * to the queue by their owner's edit, since then. Items published, unpublished or marked
   * reviewed meanwhile are not counted. The queue is read a page at a time.
   */
  router.get(
    '/internal/evidence/posted-counts',
    route(async (req, res) => {
      const since =
        typeof req.query.since === 'string' && !Number.isNaN(Date.parse(req.query.since)) ? new Date(req.query.since).toISOString() : null;
      if (!since) throw badRequest('since must be a date and time');
      const counts: PostedCounts = { notes: 0, photos: 0, videos: 0, audio: 0 };
      const kinds = { 1: 'notes', 2: 'photos', 3: 'videos', 4: 'audio' } as const;
      let cursor: string | undefined;
      do {
        const page = await deps.repository.list({ reviewStatus: 'new' }, PAGE, cursor);
        for (const record of page.items) {
          if (record.date_posted > since || record.updated_at > since) counts[kinds[record.media_type]] += 1;
        }
        cursor = page.nextCursor ?? undefined;
      } while (cursor);
      res.set('Cache-Control', 'no-store');
      res.json(counts);
    }),
  );

  /** One file of an item, whole, streamed from the blob store. */
  router.get(
    '/internal/evidence/:id/files/:variant',
    route(async (req, res) => {
      const id = uuidParam(req.params.id, MESSAGES.evidenceNotFound);
      const variant = String(req.params.variant) as StoredVariant;
      if (!VARIANTS.has(variant)) throw notFound();
      const record = await deps.repository.findById(id);
      if (!record) throw notFound(MESSAGES.evidenceNotFound);
      const key = mediaKeyOf(record, variant);
      const object = key ? await deps.blobs.get(key) : null;
      if (!object) throw notFound('This item has no such file');
      res.set({ 'Content-Type': object.info.contentType, 'Content-Length': String(object.info.size), 'Cache-Control': 'no-store' });
      object.body.on('error', (error) => res.destroy(error));
      res.on('close', () => object.body.destroy());
      object.body.pipe(res);
    }),
  );
  return router;
}
