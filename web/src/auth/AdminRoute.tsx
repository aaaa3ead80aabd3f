import { Navigate } from 'react-router';
import { isAdminRole } from '@portal/contracts';
import { LoginPage } from '../app/pages';
import AdminPage from '../pages/admin/AdminPage';
import { useCurrentUser } from './useCurrentUser';

/**
 * /admin: protected; a participant (role 1) is sent to /user; administrators see the page.
 * A chunk of its own, like the page (the role rule comes with the shared contracts); the page's
 * lists load in chunks of their own when shown.
 */
export default function AdminRoute() {
  const { user } = useCurrentUser();
  if (!user) return <LoginPage />;
  return isAdminRole(user.role) ? <AdminPage /> : <Navigate to="/user" replace />;
}
