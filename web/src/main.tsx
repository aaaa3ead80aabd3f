import { StrictMode, startTransition } from 'react';
import { createRoot } from 'react-dom/client';
import { currentUserQuery } from './auth/useCurrentUser';
import { publicConfigQuery } from './config/usePublicConfig';
import { App } from './app/App';
import { preloadPage } from './app/pages';
import { createQueryClient } from './app/query-client';

const root = document.getElementById('root');
if (!root) throw new Error('index.html has no #root element');

// What every page waits for starts now, before React renders: the signed-in user, the event's
// configuration and the code of the page at this address, all at once.
const queryClient = createQueryClient();
void queryClient.prefetchQuery(currentUserQuery);
void queryClient.prefetchQuery(publicConfigQuery);
preloadPage(window.location.pathname);

// The first render as a transition: React renders it in slices and lets the browser breathe in
// between, instead of one long task that blocks a phone's main thread (Lighthouse's TBT).
startTransition(() => {
  createRoot(root).render(
    <StrictMode>
      <App queryClient={queryClient} />
    </StrictMode>,
  );
});
