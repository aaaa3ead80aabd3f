import { Router } from 'express';
import { auditFilterSchema, auditQuerySchema } from '@portal/contracts';
import { parseInput, requireAdmin, route, setNextLink } from '@portal/platform';
import type { AuditTrail } from '../../domain/audit-trail.js';

/** The audit log, administrators only: a page at a time, or everything matching as CSV. */
export function auditRoutes({ trail }: { trail: AuditTrail }): Router {
  const router = Router();

  router.get(
    '/api/admin/activity',
    route(async (req, res) => {
      requireAdmin(req);
      const { limit, cursor, ...filter } = parseInput(auditQuerySchema, req.query);
      const page = await trail.list(filter, limit, cursor);
      setNextLink(req, res, limit, page.nextCursor);
      res.set('Cache-Control', 'no-store');
      res.json(page.items);
    }),
  );

  router.get(
    '/api/admin/activity.csv',
    route(async (req, res) => {
      requireAdmin(req);
      const filter = parseInput(auditFilterSchema, req.query);
      const lines = trail.csv(filter);
      // The first page is read before the answer starts, so a store outage is a clean error.
      const first = await lines.next();
      res.status(200).set({
        'Content-Type': 'text/csv; charset=utf-8',
        'Content-Disposition': `attachment; filename="activity-${new Date().toISOString().slice(0, 10)}.csv"`,
        'Cache-Control': 'private, no-store',
      });
      if (!first.done) res.write(first.value);
      try {
        for await (const chunk of lines) {
          if (!res.write(chunk)) await new Promise((resolve) => res.once('drain', resolve));
        }
        res.end();
      } catch (error) {
        // Half-way: break the download off, so it is not saved as complete.
        res.destroy(error as Error);
      }
    }),
  );

  return router;
}
