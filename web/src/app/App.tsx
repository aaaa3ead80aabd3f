import CssBaseline from '@mui/material/CssBaseline';
import { ThemeProvider } from '@mui/system';
import { QueryClientProvider, type QueryClient } from '@tanstack/react-query';
import { Suspense, lazy, useEffect, useState, type ComponentType, type ReactNode } from 'react';
import { BrowserRouter } from 'react-router';
import { OutboxAutoSend } from '../outbox/OutboxAutoSend';
import { NotificationProvider } from '../notifications/NotificationProvider';
import { AppRoutes } from './AppRoutes';
import { registerServiceWorker } from './service-worker';
import { theme } from './theme';

const NewVersionPrompt = lazy(() => import('./NewVersionPrompt'));

/**
 * The theme is a plain one (no CSS variables, one colour scheme), so it is provided the way
 * Material UI's own ThemeProvider does for such a theme (its ThemeProviderNoVars: the system
 * provider). Material UI's ThemeProvider would also bring its CSS-variables provider (colour
 * scheme storage, the init script: about 4 KB gzipped) to every first load.
 *
 * `Router` is the browser's history in the app; the build renders the first screens with a
 * static router instead (first-screen/first-screen-styles.tsx).
 */
export function App({
  queryClient,
  Router = BrowserRouter,
}: {
  queryClient: QueryClient;
  Router?: ComponentType<{ children: ReactNode }>;
}) {
  const [update, setUpdate] = useState<(() => void) | null>(null);
  useEffect(() => registerServiceWorker((apply) => setUpdate(() => apply)), []);
  return (
    <QueryClientProvider client={queryClient}>
      <ThemeProvider theme={theme}>
        <CssBaseline />
        <NotificationProvider>
          <Router>
            <AppRoutes />
            <OutboxAutoSend />
          </Router>
          {update ? (
            <Suspense fallback={null}>
              <NewVersionPrompt onReload={update} onLater={() => setUpdate(null)} />
            </Suspense>
          ) : null}
        </NotificationProvider>
      </ThemeProvider>
    </QueryClientProvider>
  );
}
