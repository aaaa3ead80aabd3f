import { lazy } from 'react';

/**
 * Every page is its own chunk (route-level code splitting): a participant's phone loads the
 * shell and the one page it shows. Pages export a default component.
 */
export const HomePage = lazy(() => import('../pages/home/HomePage'));
export const LoginPage = lazy(() => import('../pages/login/LoginPage'));
export const RegistrationPage = lazy(() => import('../pages/registration/RegistrationPage'));
export const ProfilePage = lazy(() => import('../pages/profile/ProfilePage'));
export const VerifyEmailPage = lazy(() => import('../pages/VerifyEmailPage'));
export const HelpPage = lazy(() => import('../pages/help/HelpPage'));
export const NotFoundPage = lazy(() => import('../pages/NotFoundPage'));
// The evidence screens: the public archive, one's own evidence, the upload chooser and the details form.
export const ArchivePage = lazy(() => import('../pages/archive/ArchivePage'));
export const EvidencePage = lazy(() => import('../pages/evidence/EvidencePage'));
export const EvidenceUploadPage = lazy(() => import('../pages/evidence/EvidenceUploadPage'));
export const EvidenceDetailsPage = lazy(() => import('../pages/evidence/EvidenceDetailsPage'));
/** The administration page behind its role check (auth/AdminRoute). */
export const AdminRoute = lazy(() => import('../auth/AdminRoute'));
// The password reset: the e-mail address, the e-mailed code, the new password.
export const ResetPasswordEmailPage = lazy(() => import('../pages/reset/ResetPasswordEmailPage'));
export const ResetPasswordCodePage = lazy(() => import('../pages/reset/ResetPasswordCodePage'));
export const ResetPasswordPage = lazy(() => import('../pages/reset/ResetPasswordPage'));
