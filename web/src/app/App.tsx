import CssBaseline from '@mui/material/CssBaseline';
import { ThemeProvider } from '@mui/system';
import { QueryClientProvider, type QueryClient } from '@tanstack/react-query';
import { Suspense, lazy, useEffect, useState } from 'react';
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
 */
export function App({ queryClient }: { queryClient: QueryClient }) {
  const [update, setUpdate] = useState<(() => void) | null>(null);
  useEffect(() => registerServiceWorker((apply) => setUpdate(() => apply)), []);
  return (
    <QueryClientProvider client={queryClient}>
      <ThemeProvider theme={theme}>
        <CssBaseline />
        <NotificationProvider>
          <BrowserRouter>
            <AppRoutes />
            <OutboxAutoSend />
          </BrowserRouter>
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
