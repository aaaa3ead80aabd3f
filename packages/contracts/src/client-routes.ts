/**
 * The exact-match routes of the web app (SPEC section 2). The gateway answers any other path with
 * the app and a 404 status; the app shows its '404' page there.
 */
export const CLIENT_ROUTES = [
  '/',
  '/home',
  '/home-validate',
  '/login',
  '/registration',
  '/user',
  '/verify-email',
  '/archive',
  '/Evidence',
  '/evidence',
  '/evidenceupload',
  '/evidence-details',
  '/admin',
  '/reset-password-email',
  '/reset-password-code',
  '/reset-password-page',
  '/help',
] as const;
