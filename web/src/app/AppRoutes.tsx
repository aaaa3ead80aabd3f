import { Navigate, Route, Routes } from 'react-router';
import { RedirectIfSignedIn, RequireUser, RequireVideoWatched } from '../auth/guards';
import { AppShell } from './AppShell';
import * as P from './pages';

/** The exact-match routes of SPEC section 2 (paths are case-sensitive: /Evidence and /evidence). */
export function AppRoutes() {
  return (
    <Routes>
      <Route element={<AppShell />}>
        <Route caseSensitive path="/" element={<Navigate to="/home" replace />} />
        {['/home', '/home-validate'].map((path) => (
          <Route
            key={path}
            caseSensitive
            path={path}
            element={
              <RequireVideoWatched>
                <P.HomePage />
              </RequireVideoWatched>
            }
          />
        ))}
        <Route
          caseSensitive
          path="/login"
          element={
            <RedirectIfSignedIn to="/home">
              <P.LoginPage />
            </RedirectIfSignedIn>
          }
        />
        <Route
          caseSensitive
          path="/registration"
          element={
            <RedirectIfSignedIn to="/user">
              <P.RegistrationPage />
            </RedirectIfSignedIn>
          }
        />
        <Route
          caseSensitive
          path="/user"
          element={
            <RequireUser>
              <P.ProfilePage />
            </RequireUser>
          }
        />
        <Route caseSensitive path="/verify-email" element={<P.VerifyEmailPage />} />
        <Route caseSensitive path="/help" element={<P.HelpPage />} />
        <Route caseSensitive path="/archive" element={<P.ArchivePage />} />
        {/* Every participant page waits for the onboarding video, not only /home (the API does too). */}
        {['/Evidence', '/evidence'].map((path) => (
          <Route
            key={path}
            caseSensitive
            path={path}
            element={
              <RequireUser>
                <RequireVideoWatched>
                  <P.EvidencePage />
                </RequireVideoWatched>
              </RequireUser>
            }
          />
        ))}
        <Route
          caseSensitive
          path="/evidenceupload"
          element={
            <RequireUser>
              <RequireVideoWatched>
                <P.EvidenceUploadPage />
              </RequireVideoWatched>
            </RequireUser>
          }
        />
        <Route
          caseSensitive
          path="/evidence-details"
          element={
            <RequireUser>
              <RequireVideoWatched>
                <P.EvidenceDetailsPage />
              </RequireVideoWatched>
            </RequireUser>
          }
        />
        <Route
          caseSensitive
          path="/admin"
          element={
            <RequireUser>
              <P.AdminRoute />
            </RequireUser>
          }
        />
        <Route caseSensitive path="/reset-password-email" element={<P.ResetPasswordEmailPage />} />
        <Route caseSensitive path="/reset-password-code" element={<P.ResetPasswordCodePage />} />
        <Route caseSensitive path="/reset-password-page" element={<P.ResetPasswordPage />} />
        <Route path="*" element={<P.NotFoundPage />} />
      </Route>
    </Routes>
  );
}
