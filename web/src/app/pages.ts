import { lazy } from 'react';

/**
 * Every page is its own chunk (route-level code splitting): a participant's phone loads the
 * shell and the one page it shows. Pages export a default component.
 */
const load = {
  home: () => import('../pages/home/HomePage'),
  login: () => import('../pages/login/LoginPage'),
  registration: () => import('../pages/registration/RegistrationPage'),
  profile: () => import('../pages/profile/ProfilePage'),
  verifyEmail: () => import('../pages/VerifyEmailPage'),
  help: () => import('../pages/help/HelpPage'),
  notFound: () => import('../pages/NotFoundPage'),
  archive: () => import('../pages/archive/ArchivePage'),
  evidence: () => import('../pages/evidence/EvidencePage'),
  evidenceUpload: () => import('../pages/evidence/EvidenceUploadPage'),
  evidenceDetails: () => import('../pages/evidence/EvidenceDetailsPage'),
  admin: () => import('../auth/AdminRoute'),
  resetEmail: () => import('../pages/reset/ResetPasswordEmailPage'),
  resetCode: () => import('../pages/reset/ResetPasswordCodePage'),
  resetPassword: () => import('../pages/reset/ResetPasswordPage'),
};

export const HomePage = lazy(load.home);
export const LoginPage = lazy(load.login);
export const RegistrationPage = lazy(load.registration);
export const ProfilePage = lazy(load.profile);
export const VerifyEmailPage = lazy(load.verifyEmail);
export const HelpPage = lazy(load.help);
export const NotFoundPage = lazy(load.notFound);
// The evidence screens: the public archive, one's own evidence, the upload chooser and the details form.
export const ArchivePage = lazy(load.archive);
export const EvidencePage = lazy(load.evidence);
export const EvidenceUploadPage = lazy(load.evidenceUpload);
export const EvidenceDetailsPage = lazy(load.evidenceDetails);
/** The administration page behind its role check (auth/AdminRoute). */
export const AdminRoute = lazy(load.admin);
// The password reset: the e-mail address, the e-mailed code, the new password.
export const ResetPasswordEmailPage = lazy(load.resetEmail);
export const ResetPasswordCodePage = lazy(load.resetCode);
export const ResetPasswordPage = lazy(load.resetPassword);

/** The page each route of AppRoutes shows (a protected one may show the login page instead). */
const PAGE_OF_ROUTE: Record<string, () => Promise<unknown>> = {
  '/': load.home,
  '/home': load.home,
  '/home-validate': load.home,
  '/login': load.login,
  '/registration': load.registration,
  '/user': load.profile,
  '/verify-email': load.verifyEmail,
  '/help': load.help,
  '/archive': load.archive,
  '/Evidence': load.evidence,
  '/evidence': load.evidence,
  '/evidenceupload': load.evidenceUpload,
  '/evidence-details': load.evidenceDetails,
  '/admin': load.admin,
  '/reset-password-email': load.resetEmail,
  '/reset-password-code': load.resetCode,
  '/reset-password-page': load.resetPassword,
};

/**
 * Starts downloading the page of the address the app opens at, before the first render: its
 * chunk then arrives beside the shell's first API calls instead of after them (the page renders
 * only once the signed-in user is known). A failure is left to the page's own load.
 */
export function preloadPage(pathname: string): void {
  const page = PAGE_OF_ROUTE[pathname] ?? load.notFound;
  page().catch(() => {});
}
