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

/**
 * The web build's copy of index.html for one client route, which also preloads that route's
 * page (web/build/route-preloads.ts), as a path inside the build: '/' is 'route-html/root.html',
 * '/home' 'route-html/home.html'. The gateway sends it for the route when the build has it.
 */
export function routeHtmlFile(route: string): string {
  return `route-html/${route === '/' ? 'root' : encodeURIComponent(route.slice(1))}.html`;
}
