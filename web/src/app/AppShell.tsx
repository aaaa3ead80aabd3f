import Box from '@mui/material/Box';
import { Suspense, useEffect } from 'react';
import { Outlet, useLocation } from 'react-router';
import { CLIENT_ROUTES } from '@portal/contracts';
import { NavBar } from '../components/NavBar';
import { PageLoading } from '../components/PageLoading';
import { usePublicConfig } from '../config/usePublicConfig';
import { usePageChanged } from '../notifications/notify-context';
import { PageErrorBoundary } from './PageErrorBoundary';
import { NotFoundPage } from './pages';

const EXACT_ROUTES = new Set<string>(CLIENT_ROUTES);

/**
 * The frame of every page: the navigation bar and the page below it. Routes match exactly, as
 * the gateway does: '/home/' is not '/home', so it is the 404 page here too.
 */
export function AppShell() {
  const { pathname } = useLocation();
  usePublicConfig();
  const pageChanged = usePageChanged();
  useEffect(() => pageChanged(), [pathname, pageChanged]);
  return (
    <Box sx={{ minHeight: '100dvh', display: 'flex', flexDirection: 'column' }}>
      <NavBar />
      <PageErrorBoundary key={pathname}>
        <Suspense fallback={<PageLoading />}>{EXACT_ROUTES.has(pathname) ? <Outlet /> : <NotFoundPage />}</Suspense>
      </PageErrorBoundary>
    </Box>
  );
}
