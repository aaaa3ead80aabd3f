import { Router } from 'express';
import { checkRequestSchema, loginRequestSchema, profileUpdateSchema, registerRequestSchema, MESSAGES } from '@portal/contracts';
import { HttpError, parseInput, requireCaller, route, signedInOnly } from '@portal/platform';
import type { UserService } from '../../domain/user-service.js';
import { toUserResponse } from '../../domain/user-record.js';
import { clearSessionCookie, setSessionCookie, type SessionCookieSettings } from '../session-cookie.js';
import { photoUpload, routeWithFiles, uploadedFile, type PhotoUploadSettings } from '../uploads.js';
import { parsedBody, type AuthRateLimits } from '../rate-limits.js';

export interface AccountRouteDeps {
  users: UserService;
  cookie: SessionCookieSettings;
  uploads: PhotoUploadSettings;
  limits: AuthRateLimits;
}

/** Registration, login, logout, the signed-in user, the profile and the onboarding flag. */
export function accountRoutes({ users, cookie, uploads, limits }: AccountRouteDeps): Router {
  const router = Router();

  router.post(
    '/api/user/register',
    // Before the body is read: a refused registration costs no upload, no hash and no decode.
    ...limits.register,
    photoUpload(uploads, ['verification_photo'], 'The photo'),
    routeWithFiles(async (req, res) => {
      const request = parseInput(registerRequestSchema, req.body);
      const user = await users.register(request, uploadedFile(req.files, ['verification_photo']));
      res.status(201).json(toUserResponse(user));
    }),
  );

  router.post(
    '/api/user/check',
    ...limits.check,
    route(async (req, res) => {
      res.json(await users.check(parseInput(checkRequestSchema, req.body)));
    }),
  );

  router.post(
    '/api/user/login',
    parsedBody(loginRequestSchema),
    ...limits.login,
    route(async (req, res) => {
      const { username, password } = parseInput(loginRequestSchema, req.body);
      const { user, sessionRawId } = await users.login(username, password, req.caller?.sessionId);
      setSessionCookie(cookie, req, res, sessionRawId);
      res.json(toUserResponse(user));
    }),
  );

  router.post(
    '/api/user/logout',
    route(async (req, res) => {
      if (req.caller) await users.logout(req.caller);
      clearSessionCookie(cookie, req, res);
      // A phone shared at the venue: what the last person saw (pictures, pages) leaves with them.
      res.set({ 'Clear-Site-Data': '"cache"', 'Cache-Control': 'no-store' });
      res.json({ ok: true });
    }),
  );

  router.get(
    '/api/user',
    route(async (req, res) => {
      res.set('Cache-Control', 'no-store');
      res.json(toUserResponse(await users.me(requireCaller(req))));
    }),
  );

  // The app's first question on every page: 200 for everyone, with user null for a visitor (a
  // 401 here would be logged by the browser as an error on every visitor's page).
  router.get(
    '/api/session',
    route(async (req, res) => {
      res.set('Cache-Control', 'no-store');
      // A session whose account is gone is nobody too.
      const user = req.caller
        ? await users
            .me(req.caller)
            .catch((error: unknown) => (error instanceof HttpError && error.status === 401 ? null : Promise.reject(error)))
        : null;
      res.json({ user: user ? toUserResponse(user) : null });
    }),
  );

  router.put(
    '/api/evidence/user',
    signedInOnly(),
    ...limits.currentPassword,
    photoUpload(uploads, ['file', 'avatar'], 'The avatar'),
    routeWithFiles(async (req, res) => {
      const caller = requireCaller(req);
      const update = parseInput(profileUpdateSchema, req.body);
      const user = await users.updateProfile(caller, update, uploadedFile(req.files, ['file', 'avatar'])).catch((error: unknown) => {
        // Counted by the current-password limiter: a wrong password, not any refused update.
        if (error instanceof HttpError && error.fields?.current_password === MESSAGES.currentPasswordWrong)
          res.locals.currentPasswordRefused = true;
        throw error;
      });
      res.json(toUserResponse(user));
    }),
  );

  router.put(
    '/api/user/watched/:id',
    route(async (req, res) => {
      const user = await users.markVideoWatched(requireCaller(req), String(req.params.id));
      res.json(toUserResponse(user));
    }),
  );

  return router;
}
