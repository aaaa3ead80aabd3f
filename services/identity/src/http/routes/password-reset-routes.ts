import { Router } from 'express';
import {
  checkCodeRequestSchema,
  checkEmailRequestSchema,
  passwordUpdateRequestSchema,
  resendCodeRequestSchema,
  sendCodeRequestSchema,
  MESSAGES,
} from '@portal/contracts';
import { parseInput, requireCaller, route, signedInOnly } from '@portal/platform';
import type { PasswordResetService } from '../../domain/password-reset-service.js';
import type { UserService } from '../../domain/user-service.js';
import { parsedBody, type AuthRateLimits } from '../rate-limits.js';

/** The reset flow of SPEC section 7, with the code made and checked here, and the e-mail link. */
export function passwordResetRoutes({
  resets,
  users,
  limits,
}: {
  resets: PasswordResetService;
  users: UserService;
  limits: AuthRateLimits;
}): Router {
  const router = Router();

  router.post(
    '/api/email/check-email',
    ...limits.checkEmail,
    route(async (req, res) => {
      const { email } = parseInput(checkEmailRequestSchema, req.body);
      res.json({ exists: await resets.emailExists(email) });
    }),
  );

  router.post(
    '/api/email/send',
    parsedBody(sendCodeRequestSchema),
    ...limits.sendCode,
    route(async (req, res) => {
      const { email } = parseInput(sendCodeRequestSchema, req.body);
      await resets.sendCode(email);
      res.json({ ok: true, message: 'A code is on its way to your e-mail address' });
    }),
  );

  router.put(
    '/api/email/reset-code',
    parsedBody(resendCodeRequestSchema),
    ...limits.sendCode,
    route(async (req, res) => {
      const { email } = parseInput(resendCodeRequestSchema, req.body);
      await resets.sendCode(email);
      res.json({ ok: true, message: 'A new code is on its way to your e-mail address' });
    }),
  );

  router.post(
    '/api/email/check/reset-code',
    parsedBody(checkCodeRequestSchema),
    ...limits.checkCode,
    route(async (req, res) => {
      const { email, code } = parseInput(checkCodeRequestSchema, req.body);
      res.json({ codeMatches: await resets.checkCode(email, code) });
    }),
  );

  router.put(
    '/api/user/passwordupdated',
    parsedBody(passwordUpdateRequestSchema),
    ...limits.checkCode,
    route(async (req, res) => {
      const { email, code, password } = parseInput(passwordUpdateRequestSchema, req.body);
      await resets.updatePassword(email, code, password);
      res.json({ ok: true, message: MESSAGES.passwordUpdated });
    }),
  );

  // A new confirmation link for the signed-in account (the earlier one died: 7 days, or a rotated
  // secret). The account's address is read first: the limiters count per account, per mailbox
  // and per client address (rate-limits.ts).
  router.post(
    '/api/user/verify-email/resend',
    signedInOnly(),
    (req, res, next) => {
      users.me(requireCaller(req)).then((user) => {
        res.locals.accountEmail = user.email;
        next();
      }, next);
    },
    ...limits.resendLink,
    route(async (req, res) => {
      const { sent } = await users.resendVerification(requireCaller(req));
      res.set('Cache-Control', 'no-store');
      res.status(sent ? 202 : 200).json({ ok: true, sent, message: sent ? MESSAGES.newLinkSent : MESSAGES.alreadyConfirmed });
    }),
  );

  // The link in the confirmation e-mail: confirms the address, then shows the app's page.
  router.get(
    '/api/user/verify-email',
    route(async (req, res) => {
      const token = typeof req.query.token === 'string' ? req.query.token : '';
      const verified = token.length > 0 && token.length < 2000 && (await users.verifyEmail(token));
      res.set('Cache-Control', 'no-store');
      res.redirect(303, `/verify-email?status=${verified ? 'verified' : 'invalid'}`);
    }),
  );

  return router;
}
