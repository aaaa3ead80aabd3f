import { Router } from 'express';
import parseRange from 'range-parser';
import { MESSAGES } from '@portal/contracts';
import { HttpError, isNotModified, notFound, route, uuidParam, type BlobStore } from '@portal/platform';
import type { EvidenceService } from '../../domain/evidence-service.js';
import type { MediaVariant } from '../../domain/evidence-record.js';

const VARIANTS = new Set<MediaVariant>(['display', 'thumb', 'poster', 'original', 'blurred-display', 'blurred-thumb', 'blurred-poster']);

/**
 * GET/HEAD /media/evidence/{id}/{variant}: an item's media with byte ranges (seeking in video
 * and audio). Public derivatives may be cached by anyone for an hour; everything else (private
 * items' media, every original) is never stored by any cache.
 */
export function mediaRoutes({ evidence, blobs }: { evidence: EvidenceService; blobs: BlobStore }): Router {
  const router = Router();
  router.get(
    '/media/evidence/:id/:variant',
    route(async (req, res) => {
      const variant = String(req.params.variant) as MediaVariant;
      if (!VARIANTS.has(variant)) throw notFound();
      const id = uuidParam(req.params.id, MESSAGES.evidenceNotFound);
      const version = typeof req.query.v === 'string' ? req.query.v : undefined;
      const { key, cache } = await evidence.mediaFor(req.caller, id, variant, version);
      const info = await blobs.stat(key);
      if (!info) throw notFound('This media is missing');

      const etag = `"${info.etag}"`;
      res.set({
        'Accept-Ranges': 'bytes',
        'Content-Type': info.contentType,
        ETag: etag,
        'Last-Modified': info.lastModified.toUTCString(),
        // Private media (and every original) stay in no cache, the browser's included: a phone
        // shared at the venue must not show them to the next person after logout.
        'Cache-Control': variant !== 'original' && cache === 'public' ? 'public, max-age=3600' : 'private, no-store',
        'Content-Disposition': variant === 'original' ? 'attachment' : 'inline',
      });
      if (cache === 'private') res.vary('Cookie');
      // If-None-Match (weak or strong, a list, *) or else If-Modified-Since, as browsers send them.
      if (isNotModified(req.headers, { etag, lastModified: info.lastModified })) {
        res.status(304).end();
        return;
      }

      let range: { start: number; end: number } | undefined;
      const header = req.headers.range;
      const ifRange = req.headers['if-range'];
      if (header && (!ifRange || ifRange === etag)) {
        const parsed = parseRange(info.size, header, { combine: true });
        if (parsed === -1) {
          res.set('Content-Range', `bytes */${info.size}`);
          throw new HttpError(416, 'validation_failed', 'The requested range is outside the file');
        }
        // A single range is served partially; several ranges (rare for media) get the whole file.
        if (parsed !== -2 && parsed.type === 'bytes' && parsed.length === 1) range = parsed[0]!;
      }

      const length = range ? range.end - range.start + 1 : info.size;
      res.status(range ? 206 : 200);
      res.set('Content-Length', String(length));
      if (range) res.set('Content-Range', `bytes ${range.start}-${range.end}/${info.size}`);
      if (req.method === 'HEAD' || length === 0) {
        res.end();
        return;
      }
      const object = await blobs.get(key, range);
      if (!object) throw notFound('This media is missing');
      object.body.on('error', (error) => res.destroy(error));
      res.on('close', () => object.body.destroy());
      object.body.pipe(res);
    }),
  );
  return router;
}
