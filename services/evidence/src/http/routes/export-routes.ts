import { Router } from 'express';
import { investigatorExportQuerySchema } from '@portal/contracts';
import { parseInput, requireAdmin, route } from '@portal/platform';
import type { InvestigatorExporter } from '../../domain/investigator-export.js';

/** The investigator's export (administrators): one zip archive, streamed as it is made. */
export function exportRoutes({ exporter }: { exporter: InvestigatorExporter }): Router {
  const router = Router();
  router.get(
    '/api/evidence/export',
    route(async (req, res) => {
      const caller = requireAdmin(req);
      const query = parseInput(investigatorExportQuerySchema, req.query);
      const prepared = await exporter.prepare(caller, query);
      res.status(200).set({
        'Content-Type': 'application/zip',
        'Content-Disposition': `attachment; filename="${prepared.fileName}"`,
        'Cache-Control': 'private, no-store',
      });
      // A failure half-way is logged and breaks the download off: the browser reports it failed.
      await prepared.writeTo(res).catch(() => undefined);
    }),
  );
  return router;
}
