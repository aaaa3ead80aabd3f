import { Router } from 'express';
import { z } from 'zod';
import { notFound, parseInput, requireServiceToken, route, type IdentityTokens } from '@portal/platform';
import type { SessionService } from '../../domain/session-service.js';
import type { UserRepository } from '../../repositories/user-repository.js';

const resolveRequest = z.object({ sessionId: z.string().min(1).max(200) });

/** Routes for the gateway only (a service token is required): session resolution. */
export function internalRoutes(deps: { tokens: IdentityTokens; sessions: SessionService; users: UserRepository }): Router {
  const router = Router();
  router.use('/internal', requireServiceToken(deps.tokens));
  router.post(
    '/internal/sessions/resolve',
    route(async (req, res) => {
      const { sessionId } = parseInput(resolveRequest, req.body);
      const session = await deps.sessions.resolve(sessionId);
      const user = session ? await deps.users.findById(session.userId) : null;
      if (!session || !user) throw notFound('No such session');
      res.json({
        userId: user.id,
        role: user.role,
        username: user.username,
        sessionId: session.id,
        expiresAt: session.expiresAt,
        videoWatched: user.video_watched,
      });
    }),
  );
  return router;
}
