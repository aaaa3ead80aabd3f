import { Router } from 'express';
import { MESSAGES, adminUserUpdateSchema, pageQuerySchema } from '@portal/contracts';
import { parseInput, uuidParam, requireAdmin, route, setNextLink } from '@portal/platform';
import type { UserService } from '../../domain/user-service.js';
import type { ParticipantExporter } from '../../domain/participant-export.js';
import type { AuthRateLimits } from '../rate-limits.js';
import { toUserResponse } from '../../domain/user-record.js';
import type { AppointmentService } from '../../domain/appointment-service.js';

export function userIdParam(value: unknown): string {
  return uuidParam(value, MESSAGES.userNotFound);
}

/** Administrators only: every check is here, on the server. */
export function adminRoutes({
  users,
  exporter,
  limits,
  appointments,
}: {
  users: UserService;
  exporter: ParticipantExporter;
  limits: AuthRateLimits;
  appointments: Pick<AppointmentService, 'erase'>;
}): Router {
  const router = Router();

  router.get(
    '/api/user/users',
    route(async (req, res) => {
      requireAdmin(req);
      const { limit, cursor } = parseInput(pageQuerySchema, req.query);
      const page = await users.listUsers(limit, cursor);
      setNextLink(req, res, limit, page.nextCursor);
      res.set('Cache-Control', 'no-store');
      res.json(page.items.map(toUserResponse));
    }),
  );

  router.put(
    '/api/user/admin/:id',
    route(async (req, res) => {
      const caller = requireAdmin(req);
      const id = userIdParam(req.params.id);
      const user = await users.adminUpdate(caller, id, parseInput(adminUserUpdateSchema, req.body));
      res.json(toUserResponse(user));
    }),
  );

  /** Everything held on one participant, as one zip archive streamed as it is made. */
  router.get(
    '/api/user/:id/export',
    route(async (req, res) => {
      const caller = requireAdmin(req);
      const prepared = await exporter.prepare(userIdParam(req.params.id));
      await users.recordExport(caller, prepared.user);
      res.status(200).set({
        'Content-Type': 'application/zip',
        'Content-Disposition': `attachment; filename="${prepared.fileName}"`,
        'Cache-Control': 'private, no-store',
      });
      // A failure half-way is logged and breaks the download off: the browser reports it failed.
      await prepared.writeTo(res).catch(() => undefined);
    }),
  );

  router.delete(
    '/api/user/:id',
    route(async (req, res) => {
      const caller = requireAdmin(req);
      const deleted = await users.deleteUser(caller, userIdParam(req.params.id));
      await limits.forgetAccount(deleted);
      // Their appointment goes with them (and, through its cancellation, its queued messages and their copies).
      await appointments.erase(deleted);
      res.json({ ok: true, message: MESSAGES.userDeleted });
    }),
  );

  return router;
}
