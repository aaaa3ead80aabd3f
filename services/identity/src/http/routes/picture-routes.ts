import { Router } from 'express';
import { isNotModified, notFound, route, type BlobStore } from '@portal/platform';
import type { UserService } from '../../domain/user-service.js';
import { userIdParam } from './admin-routes.js';

/**
 * Verification photos and avatars are for their owner and administrators only and are never
 * stored by any cache. An avatar is no longer public: its owner can change it at any time, and
 * no moderator sees the change, so the archive shows none (docs/SECURITY.md).
 */
export function pictureRoutes({ users, blobs }: { users: UserService; blobs: BlobStore }): Router {
  const router = Router();
  for (const kind of ['avatar', 'verification-photo'] as const) {
    router.get(
      `/api/user/:id/${kind}`,
      route(async (req, res) => {
        const { key } = await users.pictureFor(req.caller, userIdParam(req.params.id), kind);
        const info = await blobs.stat(key);
        if (!info) throw notFound('No picture');
        res.set({
          'Content-Type': info.contentType,
          ETag: `"${info.etag}"`,
          'Last-Modified': info.lastModified.toUTCString(),
          // Often a face: no cache keeps it, not even the browser's (a phone shared at the venue
          // would show it to the next person after logout).
          'Cache-Control': 'private, no-store',
          'Content-Disposition': 'inline',
        });
        res.vary('Cookie');
        // If-None-Match (weak or strong, a list, *) or else If-Modified-Since, as browsers send them.
        if (isNotModified(req.headers, { etag: `"${info.etag}"`, lastModified: info.lastModified })) {
          res.status(304).end();
          return;
        }
        res.set('Content-Length', String(info.size));
        const object = await blobs.get(key);
        if (!object) throw notFound('No picture');
        object.body.on('error', (error) => res.destroy(error));
        object.body.pipe(res);
      }),
    );
  }
  return router;
}
